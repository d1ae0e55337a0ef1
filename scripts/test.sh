#!/usr/bin/env bash
# The full test run (CI runs exactly this, via .ci/run):
#   setup (scripts/setup.sh --cuda) -> CMake configure of build/ with OBORO_CUDA=ON (nvcc from the
#   venv's nvidia-cuda-nvcc wheel) -> build -> ctest (all C++ tests) -> pytest tests/python.
# Exits non-zero when any step or test fails.
#   Then the loaders' tests (serialization and its fuzzing loop) again, built with AddressSanitizer
#   and UndefinedBehaviorSanitizer in build-asan/ (untrusted input must never cause a memory error).
#   With OBORO_CUDA=ON, also the pip wheel with the CUDA backend (scripts/check_cuda_wheel.sh).
# Environment: OBORO_JOBS (parallel jobs, default 2), OBORO_CUDA (default ON), OBORO_BUILD_DIR (build),
#   OBORO_ASAN (default 1; 0 skips the sanitizer phase).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JOBS="${OBORO_JOBS:-2}"
BUILD="${OBORO_BUILD_DIR:-build}"
CUDA_MODE="${OBORO_CUDA:-ON}"
TIMINGS=()
section() { printf '\n======================== %s ========================\n' "$*"; }
phase_start() { section "$1"; PHASE="$1"; PHASE_T0=$SECONDS; }
phase_end() { TIMINGS+=("$(printf '%-10s %5d s' "$PHASE" $((SECONDS - PHASE_T0)))"); }
T_ALL=$SECONDS

# A build directory configured from another checkout (e.g. one copied or committed by mistake)
# cannot be reused by CMake: clear it, keeping only the Python package's own build.
if [ -f "$BUILD/CMakeCache.txt" ]; then
  home="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")"
  if [ "$home" != "$ROOT" ]; then
    echo "note: $BUILD/ was configured for $home; clearing it"
    find "$BUILD" -mindepth 1 -maxdepth 1 ! -name python -exec rm -rf {} +
  fi
fi

phase_start "setup"
bash scripts/setup.sh --cuda
phase_end

export VIRTUAL_ENV="$ROOT/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"

phase_start "configure"
gen=()
[ -f "$BUILD/CMakeCache.txt" ] || gen=(-G Ninja)
cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DOBORO_BUILD_TESTS=ON \
  -DOBORO_CUDA="$CUDA_MODE" -DPython3_EXECUTABLE="$VIRTUAL_ENV/bin/python"
phase_end

phase_start "build"
cmake --build "$BUILD" -j "$JOBS"
phase_end

phase_start "ctest"
rm -f "$BUILD/ctest-junit.xml"
set +e
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" --timeout 1800 --output-junit ctest-junit.xml
CTEST_RC=$?
set -e
if grep -qs "SKIPPED: no CUDA GPU found" "$BUILD/Testing/Temporary/LastTest.log"; then
  echo "note: GPU tests (test_cuda_device) skipped: no CUDA GPU on this machine; the CUDA sources were compiled and the kernels ran in the CPU grid emulator (test_cuda_emulated)"
fi
phase_end

WHEEL_RC=0
if [ "$CUDA_MODE" = "ON" ]; then
  phase_start "cuda-wheel"
  set +e
  bash scripts/check_cuda_wheel.sh
  WHEEL_RC=$?
  set -e
  [ "$WHEEL_RC" -eq 0 ] && echo "CUDA wheel check: passed" || echo "CUDA wheel check: FAILED (exit $WHEEL_RC)"
  phase_end
fi

ASAN_RC=0
if [ "${OBORO_ASAN:-1}" != "0" ]; then
  phase_start "asan"
  set +e
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOBORO_CUDA=OFF -DOBORO_BUILD_BENCH=OFF \
    -DOBORO_BUILD_EXAMPLES=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
    >/dev/null &&
    cmake --build build-asan -j "$JOBS" --target test_io_serialize test_io_batch_matrix test_io_fuzz 2>&1 | grep -v -e "-Wmaybe-uninitialized" -e "avx512fintrin.h" &&
    ./build-asan/tests/cpp/test_io_serialize --gtest_brief=1 &&
    ./build-asan/tests/cpp/test_io_batch_matrix --gtest_brief=1 &&
    ./build-asan/tests/cpp/test_io_fuzz
  ASAN_RC=$?
  set -e
  [ "$ASAN_RC" -eq 0 ] && echo "sanitizer run: passed" || echo "sanitizer run: FAILED (exit $ASAN_RC)"
  phase_end
fi

phase_start "pytest"
set +e
"$VIRTUAL_ENV/bin/python" -m pytest tests/python -ra -q --junitxml="$BUILD/pytest-junit.xml"
PYTEST_RC=$?
set -e
phase_end

section "summary"
for t in "${TIMINGS[@]}"; do echo "  $t"; done
echo "  total      $((SECONDS - T_ALL)) s"
echo "  ctest exit code $CTEST_RC, CUDA wheel check exit code $WHEEL_RC, sanitizer exit code $ASAN_RC, pytest exit code $PYTEST_RC"
# One closing line with the counts of both runners.
"$VIRTUAL_ENV/bin/python" - "$BUILD/ctest-junit.xml" "$BUILD/pytest-junit.xml" <<'PY' || true
import sys
import xml.etree.ElementTree as ET
p = f = s = 0
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        continue
    for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
        tests = int(suite.get("tests", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0) or suite.get("disabled", 0) or 0)
        p += tests - bad - skip
        f += bad
        s += skip
print(f"oboro: {p} passed, {f} failed, {s} skipped")
PY
if [ "$CTEST_RC" -ne 0 ] || [ "$WHEEL_RC" -ne 0 ] || [ "$ASAN_RC" -ne 0 ] || [ "$PYTEST_RC" -ne 0 ]; then
  exit 1
fi
