#!/usr/bin/env bash
# Configures oboro as if GoogleTest were not installed (CMAKE_DISABLE_FIND_PACKAGE_GTest), in
# scratch build directories: with OBORO_BUILD_TESTS=AUTO the configure succeeds, says that the
# suites are skipped and still has the library and the quick start example; with
# OBORO_BUILD_TESTS=ON it fails and says how to get GoogleTest. Run by ctest (tests/cmake).
# Usage: configure_without_gtest.sh CMAKE SOURCE_DIR SCRATCH_DIR CXX_COMPILER
set -euo pipefail
cmake="$1" src="$2" scratch="$3" cxx="$4"
rm -rf "$scratch"
mkdir -p "$scratch"
common=(-S "$src" -DCMAKE_CXX_COMPILER="$cxx" -DOBORO_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON)

fail=0
if ! "$cmake" "${common[@]}" -B "$scratch/auto" >"$scratch/auto.log" 2>&1; then
  echo "FAIL: OBORO_BUILD_TESTS=AUTO without GoogleTest did not configure:"; cat "$scratch/auto.log"; fail=1
elif ! grep -q "GoogleTest not found: the C++ test suites (tests/cpp) are SKIPPED" "$scratch/auto.log"; then
  echo "FAIL: OBORO_BUILD_TESTS=AUTO without GoogleTest gave no skip message:"; cat "$scratch/auto.log"; fail=1
elif ! "$cmake" --build "$scratch/auto" --target help | grep -q "quickstart"; then
  echo "FAIL: without GoogleTest the quickstart example is not a target"; fail=1
elif "$cmake" --build "$scratch/auto" --target help | grep -q "test_math_ntt"; then
  echo "FAIL: without GoogleTest a GoogleTest suite is still a target"; fail=1
else
  echo "ok: AUTO without GoogleTest configures, skips the suites and keeps the quickstart example"
fi

if "$cmake" "${common[@]}" -B "$scratch/on" -DOBORO_BUILD_TESTS=ON >"$scratch/on.log" 2>&1; then
  echo "FAIL: OBORO_BUILD_TESTS=ON without GoogleTest configured"; fail=1
elif ! grep -q "OBORO_BUILD_TESTS=ON but GoogleTest was not found" "$scratch/on.log"; then
  echo "FAIL: OBORO_BUILD_TESTS=ON without GoogleTest failed without the expected message:"; cat "$scratch/on.log"; fail=1
else
  echo "ok: ON without GoogleTest stops with: $(grep -A3 'CMake Error' "$scratch/on.log" | tr -s ' \n' ' ' | cut -c1-200)"
fi
rm -rf "$scratch"
exit "$fail"
