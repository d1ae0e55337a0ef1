#!/usr/bin/env bash
# Coverage-guided fuzzing of the loaders (docs/serialization.md, "Fuzzing"):
#   Debian's clang (installed when missing) -> build-fuzz/ configured with OBORO_BUILD_FUZZ=ON
#   (libFuzzer's instrumentation, AddressSanitizer, UndefinedBehaviorSanitizer) -> the seed corpora
#   (make_corpus: valid records of every type) -> each target (one per record type) for
#   OBORO_FUZZ_SECONDS seconds -> per target: executions, coverage (libFuzzer's cov: and ft:) and
#   corpus size.
# Exits non-zero when a target crashes, throws anything but SerializationError, leaks, trips a
# sanitizer, runs out of memory or hangs; the input that did it is kept under
# build-fuzz/crashes/<type>/ and the command that reproduces it is printed.
# The corpus each run finds is kept in build-fuzz/corpus/<type>/ and the next run starts from it.
#
# Environment: OBORO_FUZZ_SECONDS (per target, default 20), OBORO_FUZZ_TARGETS (types to run,
#   space-separated, default all), OBORO_JOBS (build jobs, default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SECONDS_PER_TARGET="${OBORO_FUZZ_SECONDS:-20}"
JOBS="${OBORO_JOBS:-2}"
BUILD=build-fuzz
section() { printf '\n==== fuzz: %s ====\n' "$*"; }
T0=$SECONDS

# ---- 1. clang with libFuzzer (Debian's packages only) ----------------------------------------------
section "clang"
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v clang++ >/dev/null 2>&1 || need+=(clang)
# libFuzzer and the sanitizer runtimes are a package of their own
if ! command -v clang++ >/dev/null 2>&1 || [ ! -f "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a)" ]; then
  need+=(libclang-rt-14-dev)
fi
if ((${#need[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "installing: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
clang++ --version | head -1

# ---- 2. build ------------------------------------------------------------------------------------
section "build ($BUILD/)"
# A build directory of another checkout or compiler cannot be reused.
if [ -f "$BUILD/CMakeCache.txt" ]; then
  home="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")"
  compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")"
  if [ "$home" != "$ROOT" ] || [[ "$compiler" != *clang* ]]; then
    echo "note: $BUILD/ was configured for $home with $compiler; clearing it"
    find "$BUILD" -mindepth 1 -maxdepth 1 ! -name corpus ! -name crashes -exec rm -rf {} +
  fi
fi
gen=()
[ -f "$BUILD/CMakeCache.txt" ] || gen=(-G Ninja)
cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DOBORO_BUILD_FUZZ=ON -DOBORO_CUDA=OFF -DOBORO_BUILD_TESTS=OFF -DOBORO_BUILD_BENCH=OFF \
  -DOBORO_BUILD_EXAMPLES=OFF >/dev/null
T_BUILD=$SECONDS
cmake --build "$BUILD" -j "$JOBS" --target fuzz_targets
echo "built in $((SECONDS - T_BUILD)) s"

# The types: one target each (fuzz/CMakeLists.txt lists them).
ALL_TYPES="$(cd "$BUILD/fuzz" && ls fuzz_* | sed 's/^fuzz_//' | xargs)"
TYPES="${OBORO_FUZZ_TARGETS:-$ALL_TYPES}"

# ---- 3. seed corpora -------------------------------------------------------------------------------
section "seed corpora"
rm -rf "$BUILD/seeds"
"$BUILD/fuzz/make_corpus" "$BUILD/seeds"

# ---- 4. run every target -----------------------------------------------------------------------
section "run: ${SECONDS_PER_TARGET} s per target"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
rows=()
for type in $TYPES; do
  target="$BUILD/fuzz/fuzz_$type"
  if [ ! -x "$target" ]; then
    echo "fuzz.sh: no target for '$type' (types: $ALL_TYPES)" >&2
    exit 2
  fi
  corpus="$BUILD/corpus/$type" crashes="$BUILD/crashes/$type" log="$BUILD/logs/$type.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  rm -f "$crashes"/*
  # -timeout: one input may take at most 10 s (a hang); -rss_limit_mb: 2 GiB (a loader that
  # allocates more than the parameters imply); new inputs go to the first corpus directory.
  set +e
  "$target" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$corpus" "$BUILD/seeds/$type" >"$log" 2>&1
  rc=$?
  set -e
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  status="$(grep -E '^#[0-9]+' "$log" | tail -1)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")"
  corp="$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$status")"
  verdict=ok
  if [ "$rc" -ne 0 ]; then
    verdict="FAILED (exit $rc)"
    failed+=("$type")
  fi
  rows+=("$(printf '%-18s %10s %7s %8s %12s   %s' "$type" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict")")
  echo "${rows[-1]}"
  if [ "$rc" -ne 0 ]; then
    echo "---- $type: the end of its log ($log) ----"
    grep -v -E '^#[0-9]+|^INFO:|^stat::|NEW_FUNC' "$log" | tail -40
    for input in "$crashes"/*; do
      [ -f "$input" ] || continue
      echo "kept: $input"
      echo "reproduce: $target $input"
    done
  fi
done

section "summary"
printf '%-18s %10s %7s %8s %12s   %s\n' target executions cov ft corpus result
for r in "${rows[@]}"; do echo "$r"; done
echo "(cov: code edges covered, ft: libFuzzer's features (edges with hit counts, comparisons); corpus: libFuzzer's"
echo " corpus at the end, inputs/bytes: the seeds and the inputs found that added coverage, kept in $BUILD/corpus/)"
echo "total $((SECONDS - T0)) s"
if ((${#failed[@]})); then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
