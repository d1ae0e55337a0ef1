#!/usr/bin/env bash
# The full test run (CI runs exactly this, via .ci/run, on a clean clone of a 2-core machine), in
# phases whose times the summary prints:
#   setup      scripts/setup.sh --cuda --clang --no-package: Debian packages (Clang 14 included) and
#              .venv with the CUDA compiler wheels; the oboro package is not built there
#   configure  build/ with GCC, Release, OBORO_CUDA=ON (nvcc from the venv's nvidia-cuda-nvcc wheel):
#              every C++ test, benchmark and example, and the Python module (OBORO_BUILD_PYTHON=ON)
#   build      all of it: the core is compiled once, for the tests and the module alike
#   package    the editable oboro package from build/: scripts/setup.sh --package-only, with
#              scikit-build-core pointed at build/, its configuration and the module's target
#              (SKBUILD_BUILD_DIR, SKBUILD_CMAKE_DEFINE, SKBUILD_BUILD_TARGETS), so that it only packs
#              the module; a compile there fails the run
#   ctest      every C++ test of build/ (the build checks of tests/cmake included)
#   cuda-wheel (OBORO_CUDA=ON) the pip wheel with the CUDA backend, packed from build/ as well, in a
#              throwaway venv (scripts/check_cuda_wheel.sh)
#   clang      build-clang/: Clang 14 with AddressSanitizer and UndefinedBehaviorSanitizer,
#              RelWithDebInfo, CPU only: the library and every C++ test (no benchmarks, no examples),
#              then ctest there, every test included (none is too slow under the sanitizers: the
#              slowest, test_algorithms_matmul, takes a few minutes, the bootstrapping suite about
#              1.5; the GPU test skips itself without CUDA): the loaders' tests (serialization and
#              its fuzzing loop: untrusted input must never cause a memory error) and the known
#              answers (test_known_answers: the same digests as GCC's) among them; then the
#              thread pool's test under ThreadSanitizer.
#              OBORO_BUILD_FUZZ: when fuzz/ exists (libFuzzer targets), they are built here too.
#   pytest     tests/python against the module built in build/
# Exits non-zero when any step or test fails.
# Environment: OBORO_JOBS (parallel jobs, default 2), OBORO_CUDA (default ON), OBORO_BUILD_DIR (build),
#   OBORO_CLANG (default 1; 0 skips the Clang phase).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JOBS="${OBORO_JOBS:-2}"
BUILD="${OBORO_BUILD_DIR:-build}"
CUDA_MODE="${OBORO_CUDA:-ON}"
CLANG_BUILD=build-clang
TIMINGS=()
section() { printf '\n======================== %s ========================\n' "$*"; }
phase_start() { section "$1"; PHASE="$1"; PHASE_T0=$SECONDS; }
phase_end() { TIMINGS+=("$(printf '%-10s %5d s' "$PHASE" $((SECONDS - PHASE_T0)))"); }
T_ALL=$SECONDS

# A build directory configured from another checkout (e.g. one copied or committed by mistake)
# cannot be reused by CMake: clear it, keeping only the Python package's own build.
for dir in "$BUILD" "$CLANG_BUILD"; do
  if [ -f "$dir/CMakeCache.txt" ]; then
    home="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt")"
    if [ "$home" != "$ROOT" ]; then
      echo "note: $dir/ was configured for $home; clearing it"
      find "$dir" -mindepth 1 -maxdepth 1 ! -name python -exec rm -rf {} +
    fi
  fi
done

phase_start "setup"
clang_flag=()
[ "${OBORO_CLANG:-1}" != "0" ] && clang_flag=(--clang)
bash scripts/setup.sh --cuda "${clang_flag[@]}" --no-package
phase_end

export VIRTUAL_ENV="$ROOT/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"

# The configuration of build/, written once: CMake gets it as -D options, scikit-build-core (which
# reconfigures the tree when it packs the module) as SKBUILD_CMAKE_DEFINE, so that both agree and
# nothing is compiled twice. CMAKE_BUILD_TYPE is pyproject.toml's cmake.build-type (Release).
CONFIG=(OBORO_BUILD_TESTS=ON OBORO_BUILD_BENCH=ON OBORO_BUILD_EXAMPLES=ON OBORO_BUILD_PYTHON=ON "OBORO_CUDA=$CUDA_MODE")

phase_start "configure"
gen=()
[ -f "$BUILD/CMakeCache.txt" ] || gen=(-G Ninja)
cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "${CONFIG[@]/#/-D}" \
  -DPython_EXECUTABLE="$VIRTUAL_ENV/bin/python" -DPython3_EXECUTABLE="$VIRTUAL_ENV/bin/python"
phase_end

phase_start "build"
cmake --build "$BUILD" -j "$JOBS"
phase_end

phase_start "package"
case "$BUILD" in /*) SKBUILD_BUILD_DIR="$BUILD" ;; *) SKBUILD_BUILD_DIR="$ROOT/$BUILD" ;; esac
export SKBUILD_BUILD_DIR SKBUILD_BUILD_TARGETS=_core
SKBUILD_CMAKE_DEFINE="$(IFS=';'; echo "${CONFIG[*]}")"
export SKBUILD_CMAKE_DEFINE
steps_before="$(wc -l < "$BUILD/.ninja_log")"
bash scripts/setup.sh --package-only
# The module was built in the build phase: packing it must not have compiled anything.
# (ninja's log lists every step it ran; compiles and links are the objects and libraries, the rest
# is CMake's own bookkeeping, e.g. the re-check of the globbed source lists.)
rebuilt="$(tail -n +"$((steps_before + 1))" "$BUILD/.ninja_log" | awk '$4 ~ /\.(o|a|so)$/ { print $4 }')"
if [ -n "$rebuilt" ]; then
  echo "FAILED: packing the module recompiled (its configuration differs from the build phase's):"
  echo "$rebuilt" | head -20
  exit 1
fi
echo "package: nothing recompiled"
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
unset SKBUILD_BUILD_DIR SKBUILD_BUILD_TARGETS SKBUILD_CMAKE_DEFINE

CLANG_RC=0
if [ "${OBORO_CLANG:-1}" != "0" ]; then
  phase_start "clang"
  clang_args=()
  # The libFuzzer targets (fuzz/, OBORO_BUILD_FUZZ) are built with Clang and its sanitizers: here,
  # once they exist; their short runs are then part of this phase's ctest.
  [ -f fuzz/CMakeLists.txt ] && clang_args+=(-DOBORO_BUILD_FUZZ=ON)
  mkdir -p "$CLANG_BUILD"
  rm -f "$CLANG_BUILD/ctest-junit.xml"
  set +e
  cmake -S . -B "$CLANG_BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOBORO_CUDA=OFF -DOBORO_BUILD_TESTS=ON -DOBORO_BUILD_BENCH=OFF -DOBORO_BUILD_EXAMPLES=OFF "${clang_args[@]}" \
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
    >"$CLANG_BUILD/configure.log" 2>&1 || { cat "$CLANG_BUILD/configure.log"; false; } &&
    cmake --build "$CLANG_BUILD" -j "$JOBS" &&
    ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$CLANG_BUILD" --output-on-failure -j "$JOBS" --timeout 1800 --output-junit ctest-junit.xml &&
    # The thread pool's lock-free join/close protocol, under ThreadSanitizer (which cannot be
    # combined with AddressSanitizer, hence its own small build: the pool and its test).
    clang++ -std=c++17 -O1 -g -fsanitize=thread -Isrc src/oboro/util/parallel.cpp tests/cpp/test_util_parallel.cpp \
      -lgtest -lgtest_main -pthread -o "$CLANG_BUILD/test_util_parallel_tsan" &&
    TSAN_OPTIONS=halt_on_error=1 "$CLANG_BUILD/test_util_parallel_tsan" --gtest_brief=1
  CLANG_RC=$?
  set -e
  [ "$CLANG_RC" -eq 0 ] && echo "Clang + sanitizers: passed" || echo "Clang + sanitizers: FAILED (exit $CLANG_RC)"
  phase_end
fi

phase_start "pytest"
set +e
rm -f "$BUILD/pytest-junit.xml"  # a crashed run writes none: the summary must not count an old one
"$VIRTUAL_ENV/bin/python" -m pytest tests/python -ra -q --junitxml="$BUILD/pytest-junit.xml"
PYTEST_RC=$?
set -e
phase_end

section "summary"
for t in "${TIMINGS[@]}"; do echo "  $t"; done
echo "  total      $((SECONDS - T_ALL)) s"
echo "  ctest exit code $CTEST_RC, CUDA wheel check exit code $WHEEL_RC, Clang (sanitizers) exit code $CLANG_RC, pytest exit code $PYTEST_RC"
# One closing line with the counts of every runner (GCC ctest, Clang ctest, pytest).
"$VIRTUAL_ENV/bin/python" - "$BUILD/ctest-junit.xml" "$CLANG_BUILD/ctest-junit.xml" "$BUILD/pytest-junit.xml" <<'PY' || true
import sys
import xml.etree.ElementTree as ET
p = f = s = 0
missing = []
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        missing.append(path)
        continue
    for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
        tests = int(suite.get("tests", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0) or suite.get("disabled", 0) or 0)
        p += tests - bad - skip
        f += bad
        s += skip
print(f"oboro: {p} passed, {f} failed, {s} skipped"
      + (f" (no report from {', '.join(missing)}: that runner did not finish or did not run)" if missing else ""))
PY
if [ "$CTEST_RC" -ne 0 ] || [ "$WHEEL_RC" -ne 0 ] || [ "$CLANG_RC" -ne 0 ] || [ "$PYTEST_RC" -ne 0 ]; then
  exit 1
fi
