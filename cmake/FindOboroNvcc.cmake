# FindOboroNvcc
# -------------
# Locates the NVIDIA CUDA compiler driver (nvcc) for oboro's CUDA backend.
#
# Search order (first hit wins):
#   1. CMAKE_CUDA_COMPILER, if already set (command line, cache or a toolchain file);
#   2. the CUDACXX environment variable (CMake's own convention);
#   3. a CUDA toolkit root: CUDAToolkit_ROOT (variable or environment), CUDA_HOME, CUDA_PATH;
#   4. nvcc on PATH, then /usr/local/cuda/bin;
#   5. the PyPI wheel `nvidia-cuda-nvcc` of the active Python: we ask each candidate interpreter
#      (Python3_EXECUTABLE, Python_EXECUTABLE, $VIRTUAL_ENV/bin/python, python3/python on PATH)
#      for <site-packages>/nvidia/cu*/bin/nvcc. (The CUDA 13 wheels install there; the older
#      *-cu12 wheels ship no nvcc binary at all.)
#
# Result variables:
#   OboroNvcc_FOUND        TRUE when nvcc was found and runs
#   OboroNvcc_EXECUTABLE   full path to nvcc
#   OboroNvcc_VERSION      e.g. 13.5.37
#   OboroNvcc_FOUND_VIA    how it was found (for the configure summary)
#   OboroNvcc_ROOT         the directory above bin/ (toolkit or wheel root)

set(OboroNvcc_EXECUTABLE "")
set(OboroNvcc_FOUND_VIA "")

# 1. An explicit compiler. A NOTFOUND left in the cache by an earlier failed search is ignored.
if(CMAKE_CUDA_COMPILER AND EXISTS "${CMAKE_CUDA_COMPILER}")
  set(OboroNvcc_EXECUTABLE "${CMAKE_CUDA_COMPILER}")
  set(OboroNvcc_FOUND_VIA "CMAKE_CUDA_COMPILER")
endif()

# 2. CUDACXX
if(NOT OboroNvcc_EXECUTABLE AND DEFINED ENV{CUDACXX} AND NOT "$ENV{CUDACXX}" STREQUAL "")
  find_program(_oboro_nvcc_env NAMES "$ENV{CUDACXX}" NO_CACHE)
  if(_oboro_nvcc_env)
    set(OboroNvcc_EXECUTABLE "${_oboro_nvcc_env}")
    set(OboroNvcc_FOUND_VIA "CUDACXX")
  endif()
endif()

# 3. toolkit roots
if(NOT OboroNvcc_EXECUTABLE)
  set(_oboro_roots "")
  foreach(_r "${CUDAToolkit_ROOT}" "$ENV{CUDAToolkit_ROOT}" "$ENV{CUDA_HOME}" "$ENV{CUDA_PATH}")
    if(NOT "${_r}" STREQUAL "")
      list(APPEND _oboro_roots "${_r}/bin")
    endif()
  endforeach()
  if(_oboro_roots)
    find_program(_oboro_nvcc_root NAMES nvcc PATHS ${_oboro_roots} NO_DEFAULT_PATH NO_CACHE)
    if(_oboro_nvcc_root)
      set(OboroNvcc_EXECUTABLE "${_oboro_nvcc_root}")
      set(OboroNvcc_FOUND_VIA "CUDA toolkit root")
    endif()
  endif()
endif()

# 4. PATH and the usual install location
if(NOT OboroNvcc_EXECUTABLE)
  find_program(_oboro_nvcc_path NAMES nvcc PATHS /usr/local/cuda/bin NO_CACHE)
  if(_oboro_nvcc_path)
    set(OboroNvcc_EXECUTABLE "${_oboro_nvcc_path}")
    set(OboroNvcc_FOUND_VIA "PATH")
  endif()
endif()

# 5. the nvidia-cuda-nvcc wheel of the active Python
if(NOT OboroNvcc_EXECUTABLE)
  set(_oboro_pythons "")
  foreach(_p "${Python3_EXECUTABLE}" "${Python_EXECUTABLE}")
    if(NOT "${_p}" STREQUAL "")
      list(APPEND _oboro_pythons "${_p}")
    endif()
  endforeach()
  if(DEFINED ENV{VIRTUAL_ENV} AND EXISTS "$ENV{VIRTUAL_ENV}/bin/python")
    list(APPEND _oboro_pythons "$ENV{VIRTUAL_ENV}/bin/python")
  endif()
  find_program(_oboro_py3 NAMES python3 python NO_CACHE)
  if(_oboro_py3)
    list(APPEND _oboro_pythons "${_oboro_py3}")
  endif()
  list(REMOVE_DUPLICATES _oboro_pythons)

  # Prints the newest nvidia/cu<N>/bin/nvcc of that interpreter, or nothing.
  set(_oboro_py_code [=[
import glob, os, re
try:
    import nvidia
except ImportError:
    raise SystemExit(0)
found = []
for base in list(getattr(nvidia, "__path__", [])):
    for cand in glob.glob(os.path.join(base, "*", "bin", "nvcc")):
        m = re.match(r"cu(\d+)$", os.path.basename(os.path.dirname(os.path.dirname(cand))))
        if os.access(cand, os.X_OK):
            found.append((int(m.group(1)) if m else -1, cand))
if found:
    print(max(found)[1])
]=])
  foreach(_py ${_oboro_pythons})
    execute_process(COMMAND "${_py}" -c "${_oboro_py_code}"
                    OUTPUT_VARIABLE _oboro_py_nvcc OUTPUT_STRIP_TRAILING_WHITESPACE
                    ERROR_QUIET RESULT_VARIABLE _oboro_py_rc TIMEOUT 60)
    if(_oboro_py_rc EQUAL 0 AND _oboro_py_nvcc AND EXISTS "${_oboro_py_nvcc}")
      set(OboroNvcc_EXECUTABLE "${_oboro_py_nvcc}")
      set(OboroNvcc_FOUND_VIA "Python wheel nvidia-cuda-nvcc (${_py})")
      break()
    endif()
  endforeach()
endif()

set(OboroNvcc_VERSION "")
if(OboroNvcc_EXECUTABLE)
  execute_process(COMMAND "${OboroNvcc_EXECUTABLE}" --version
                  OUTPUT_VARIABLE _oboro_nvcc_ver ERROR_QUIET RESULT_VARIABLE _oboro_nvcc_rc TIMEOUT 60)
  if(_oboro_nvcc_rc EQUAL 0 AND _oboro_nvcc_ver MATCHES "V([0-9]+\\.[0-9]+\\.[0-9]+)")
    set(OboroNvcc_VERSION "${CMAKE_MATCH_1}")
  else()
    message(STATUS "oboro: ${OboroNvcc_EXECUTABLE} does not run (`nvcc --version` failed); ignoring it")
    set(OboroNvcc_EXECUTABLE "")
  endif()
endif()

if(OboroNvcc_EXECUTABLE)
  get_filename_component(_oboro_nvcc_bin "${OboroNvcc_EXECUTABLE}" DIRECTORY)
  get_filename_component(OboroNvcc_ROOT "${_oboro_nvcc_bin}" DIRECTORY)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OboroNvcc
  REQUIRED_VARS OboroNvcc_EXECUTABLE
  VERSION_VAR OboroNvcc_VERSION
  NAME_MISMATCHED)
