# OboroCuda: the OBORO_CUDA build option (AUTO | ON | OFF) and the CUDA toolchain set-up.
#
# Included once from the top-level CMakeLists.txt, before add_subdirectory(src). It must stay at
# directory scope (no function) because it calls enable_language(CUDA).
#
#   OBORO_CUDA=AUTO (default)  the CUDA backend is built when nvcc is found and works, else skipped
#   OBORO_CUDA=ON              nvcc is required; configuring fails without it
#   OBORO_CUDA=OFF             no CUDA at all
#   OBORO_CUDA_ARCHITECTURES   GPU architectures every .cu file is compiled for (default "80;90",
#                              i.e. -gencode for sm_80 and sm_90, each with its PTX)
#
# nvcc is located by cmake/FindOboroNvcc.cmake (CMAKE_CUDA_COMPILER, CUDACXX, toolkit roots, PATH,
# then the nvidia-cuda-nvcc wheel of the active Python).
#
# Sets, for the rest of the build:
#   OBORO_CUDA_ENABLED    ON when the CUDA language is enabled (every .cu file gets compiled)
#   OBORO_CUDA_LINKABLE   ON when a CUDA runtime library (cudart) can be linked, so that CUDA code
#                         can be linked into executables and run on a GPU; OFF means the CUDA
#                         sources are only compile-checked (an OBJECT library).
#   OBORO_CUDA_RUNTIME    the cudart linked: "static" or "none"

set(OBORO_CUDA "AUTO" CACHE STRING "Build the CUDA backend: AUTO (when nvcc is found), ON or OFF")
set_property(CACHE OBORO_CUDA PROPERTY STRINGS AUTO ON OFF)
set(OBORO_CUDA_ARCHITECTURES "80;90" CACHE STRING
    "CUDA architectures every CUDA source is compiled for (CMake CUDA_ARCHITECTURES syntax)")

set(OBORO_CUDA_ENABLED OFF)
set(OBORO_CUDA_LINKABLE OFF)
set(OBORO_CUDA_RUNTIME "none")

string(TOUPPER "${OBORO_CUDA}" _oboro_cuda_mode)
if(_oboro_cuda_mode MATCHES "^(ON|TRUE|YES|Y|1)$")
  set(_oboro_cuda_mode ON)
elseif(_oboro_cuda_mode MATCHES "^(OFF|FALSE|NO|N|0)$")
  set(_oboro_cuda_mode OFF)
elseif(NOT _oboro_cuda_mode STREQUAL "AUTO")
  message(FATAL_ERROR "OBORO_CUDA must be AUTO, ON or OFF (got '${OBORO_CUDA}')")
endif()

if(NOT _oboro_cuda_mode STREQUAL "OFF")
  # A NOTFOUND from an earlier AUTO run must not stop a new search.
  if(DEFINED CMAKE_CUDA_COMPILER AND NOT CMAKE_CUDA_COMPILER)
    unset(CMAKE_CUDA_COMPILER CACHE)
    unset(CMAKE_CUDA_COMPILER)
  endif()
  find_package(OboroNvcc QUIET)

  if(NOT OboroNvcc_FOUND)
    if(_oboro_cuda_mode STREQUAL "ON")
      message(FATAL_ERROR
        "OBORO_CUDA=ON but no working nvcc was found. Install the CUDA compiler wheels into the "
        "Python you build with (pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl, "
        "or: bash scripts/setup.sh --cuda), put a CUDA toolkit's nvcc on PATH, or pass "
        "-DCMAKE_CUDA_COMPILER=/path/to/nvcc.")
    endif()
    message(STATUS "oboro: CUDA backend OFF (OBORO_CUDA=AUTO and no nvcc found)")
  else()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "${OBORO_CUDA_ARCHITECTURES}")
    endif()
    if(NOT CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX})
      set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}" CACHE FILEPATH "Host compiler used by nvcc")
    endif()

    set(_oboro_cuda_usable ON)
    if(_oboro_cuda_mode STREQUAL "AUTO" AND NOT DEFINED CMAKE_CUDA_COMPILER)
      # Try the compiler in a scratch project first, so that AUTO never fails the configure.
      include(CheckLanguage)
      set(ENV{CUDACXX} "${OboroNvcc_EXECUTABLE}")
      set(ENV{CUDAHOSTCXX} "${CMAKE_CUDA_HOST_COMPILER}")
      set(ENV{CUDAARCHS} "${OBORO_CUDA_ARCHITECTURES}")
      check_language(CUDA)
      if(NOT CMAKE_CUDA_COMPILER)
        set(_oboro_cuda_usable OFF)
        message(WARNING "oboro: nvcc at ${OboroNvcc_EXECUTABLE} was found but CMake cannot use it "
                        "(see CMakeFiles/CMakeOutput.log); CUDA backend OFF. Use OBORO_CUDA=ON to "
                        "see the error.")
      endif()
    endif()

    if(_oboro_cuda_usable)
      set(CMAKE_CUDA_COMPILER "${OboroNvcc_EXECUTABLE}" CACHE FILEPATH "CUDA compiler (nvcc)")
      enable_language(CUDA)
      set(OBORO_CUDA_ENABLED ON)
      # C++20 in CUDA sources (targets inherit CXX_STANDARD 20 as their CUDA standard). CMake < 3.26
      # does not know nvcc's C++20 flag; nvcc >= 12 accepts -std=c++20, so tell CMake.
      if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION
         AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
        set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
        set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
        list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
        set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
      endif()

      # Can CUDA code be linked? CMake links the static cudart by default (nvidia-cuda-runtime and
      # every CUDA toolkit ship it). Without it, the CUDA sources are only compile-checked.
      find_library(OBORO_CUDART_STATIC NAMES cudart_static
                   HINTS ${CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES} "${OboroNvcc_ROOT}/lib" "${OboroNvcc_ROOT}/lib64"
                   NO_DEFAULT_PATH)
      if(OBORO_CUDART_STATIC)
        set(OBORO_CUDA_LINKABLE ON)
        set(OBORO_CUDA_RUNTIME "static")
      endif()

      message(STATUS "oboro: CUDA backend ON: nvcc ${OboroNvcc_VERSION} at ${OboroNvcc_EXECUTABLE} "
                     "(found via ${OboroNvcc_FOUND_VIA}); architectures ${OBORO_CUDA_ARCHITECTURES}; "
                     "cudart: ${OBORO_CUDA_RUNTIME}")
      if(NOT OBORO_CUDA_LINKABLE)
        message(STATUS "oboro: no linkable cudart next to nvcc: CUDA sources are compile-checked only "
                       "(pip install nvidia-cuda-runtime to link and run them)")
      endif()
    endif()
  endif()
endif()

# Common settings of every target with CUDA sources: architectures, C++20, position independence.
function(oboro_cuda_target_setup target)
  set_target_properties(${target} PROPERTIES
    CUDA_ARCHITECTURES "${OBORO_CUDA_ARCHITECTURES}"
    CUDA_STANDARD 20
    CUDA_STANDARD_REQUIRED ON
    CUDA_EXTENSIONS OFF
    POSITION_INDEPENDENT_CODE ON)
endfunction()

# Called from the top level after tests/cpp: links the GPU test executable with the CUDA backend
# (tests/cpp builds every test_*.cpp; test_cuda_device skips itself, printing "SKIPPED: no CUDA GPU
# found", when it is built without a linkable CUDA runtime or runs where there is no GPU).
function(oboro_cuda_attach_tests)
  if(TARGET oboro_cuda AND OBORO_CUDA_LINKABLE)
    foreach(t test_cuda_device test_cuda_queue)
      if(TARGET ${t})
        target_link_libraries(${t} PRIVATE oboro_cuda)
      endif()
    endforeach()
  endif()
endfunction()
