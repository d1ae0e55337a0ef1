# OboroTests: the OBORO_BUILD_TESTS option (AUTO | ON | OFF) and GoogleTest.
#
# Included once from the top-level CMakeLists.txt. Sets:
#   OBORO_TESTS   ON unless OBORO_BUILD_TESTS=OFF: ctest is enabled and every test that needs no
#                 GoogleTest is registered (the build checks of tests/build, the examples' and
#                 benchmarks' smoke runs)
#   OBORO_GTEST   ON when the GoogleTest suites of tests/cpp are built: GoogleTest was found and
#                 OBORO_BUILD_TESTS is AUTO or ON
#
#   OBORO_BUILD_TESTS=AUTO (default)  GoogleTest missing: the suites are skipped, with a message
#   OBORO_BUILD_TESTS=ON              GoogleTest missing: configuring fails, saying how to get it
#   OBORO_BUILD_TESTS=OFF             no tests at all
# GoogleTest is looked for with find_package(GTest) (Debian: libgtest-dev; elsewhere -DGTest_ROOT=).

string(TOUPPER "${OBORO_BUILD_TESTS}" _oboro_tests_mode)
if(_oboro_tests_mode MATCHES "^(ON|TRUE|YES|Y|1)$")
  set(_oboro_tests_mode ON)
elseif(_oboro_tests_mode MATCHES "^(OFF|FALSE|NO|N|0)$")
  set(_oboro_tests_mode OFF)
elseif(NOT _oboro_tests_mode STREQUAL "AUTO")
  message(FATAL_ERROR "OBORO_BUILD_TESTS must be AUTO, ON or OFF (got '${OBORO_BUILD_TESTS}')")
endif()

set(OBORO_TESTS OFF)
set(OBORO_GTEST OFF)
if(NOT _oboro_tests_mode STREQUAL "OFF")
  set(OBORO_TESTS ON)
  find_package(GTest QUIET)
  if(GTest_FOUND)
    set(OBORO_GTEST ON)
    message(STATUS "oboro: C++ test suites ON (GoogleTest ${GTest_VERSION})")
  elseif(_oboro_tests_mode STREQUAL "ON")
    message(FATAL_ERROR
      "OBORO_BUILD_TESTS=ON but GoogleTest was not found. Install it (Debian/Ubuntu: apt-get install "
      "libgtest-dev; or point CMake at an installed GoogleTest with -DGTest_ROOT=/its/prefix), or "
      "configure with -DOBORO_BUILD_TESTS=AUTO (the suites skipped) or OFF (no tests).")
  else()
    message(STATUS "oboro: GoogleTest not found: the C++ test suites (tests/cpp) are SKIPPED; the "
                   "library, examples and benchmarks build as usual (install libgtest-dev, or pass "
                   "-DGTest_ROOT=, to build them; -DOBORO_BUILD_TESTS=OFF silences this)")
  endif()
endif()
