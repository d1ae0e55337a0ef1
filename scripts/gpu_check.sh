#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, run on a machine that has one, from programs built
# elsewhere (a build tree configured with -DOBORO_CUDA=ON; docs/building.md#on-a-gpu-machine):
#   1. nvidia-smi and the driver's CUDA version;
#   2. the C++ GPU tests (test_cuda_device: every kernel and the batch evaluator bit for bit against
#      the CPU backend; test_cuda_queue);
#   3. the Python tests on device "cuda" (tests/python/test_parity.py's whole matrix and the cuda
#      cases of test_batch.py and test_bootstrap.py), when BIN_DIR holds a _core module for this
#      machine's python3;
#   4. bench_gpu (papers 000 and 001, per-op latency, batched encoding, the NTT launch plans, and
#      the bootstrap of B1 (batches of 1, 2, 4 and 8, each also profiled by operation) on
#      the GPU beside the CPU's), its JSON and Markdown written to OUT_DIR;
#   5. with --threads: the bootstrap of B1 on the CPU at 16, 8, 4, 2 and 1 threads (bench_bootstrap),
#      and the primitives of S4 at 1, 2, 4, 8 and 16 threads (bench_primitives, rendered by
#      bench/report_thread_scaling.py into thread_scaling.json / .md);
#   6. with --sanitize: test_cuda_device and test_cuda_queue under compute-sanitizer's memcheck,
#      racecheck and synccheck (each tool's report in OUT_DIR; a reported error fails the run).
# Each step has a time limit and writes its log to OUT_DIR as it goes, so that a step cut short
# still leaves the earlier ones' results. Exits non-zero when a test failed.
#
# Usage: scripts/gpu_check.sh BIN_DIR OUT_DIR [--threads] [--sanitize] [--bench-args "..."]
#   BIN_DIR holds test_cuda_device, test_cuda_queue, bench_gpu, bench_bootstrap, bench_primitives and optionally
#   _core.cpython-*.so (copied into python/oboro/ for step 3).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$(cd "${1:?usage: gpu_check.sh BIN_DIR OUT_DIR [--threads]}" && pwd)"
OUT="$(mkdir -p "${2:?usage: gpu_check.sh BIN_DIR OUT_DIR [--threads]}" && cd "$2" && pwd)"
shift 2
THREADS=0
SANITIZE=0
BENCH_ARGS="--ntt-plans --bootstrap B1 --bootstrap-batch 2,4,8 --bootstrap-profile"
while (($#)); do
  case "$1" in
    --threads) THREADS=1 ;;
    --sanitize) SANITIZE=1 ;;
    --bench-args) BENCH_ARGS="$2"; shift ;;
    *) echo "gpu_check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

status=0
step() {  # step NAME LIMIT_S COMMAND...: runs COMMAND with a time limit, its output to OUT/NAME.log
  local name="$1" limit="$2"
  shift 2
  printf '\n==== %s (limit %s s) ====\n' "$name" "$limit"
  local t0=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  printf '==== %s: exit %s in %s s ====\n' "$name" "$rc" "$((SECONDS - t0))"
  return "$rc"
}

step gpu 20 bash -c 'nvidia-smi; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; nproc'

step cpp_tests 180 bash -c "'$BIN/test_cuda_device' && '$BIN/test_cuda_queue'" || status=1

shopt -s nullglob
modules=("$BIN"/_core.cpython-*.so)
if ((${#modules[@]})); then
  cp "${modules[@]}" "$ROOT/python/oboro/"
  (cd "$ROOT" && step python_tests 300 env PYTHONPATH="$ROOT/python" PYTHONUNBUFFERED=1 python3 -m pytest -q -rfE \
      -p no:cacheprovider tests/python/test_parity.py tests/python/test_batch.py tests/python/test_bootstrap.py \
      -k "cuda and not emulated") || status=1
else
  echo "no _core module in $BIN: the Python tests on the GPU are skipped"
fi

# shellcheck disable=SC2086  # BENCH_ARGS is a list of arguments
step bench_gpu 400 "$BIN/bench_gpu" $BENCH_ARGS --json "$OUT/gpu.json" --markdown "$OUT/gpu.md" || status=1

if ((SANITIZE)); then
  for tool in memcheck racecheck synccheck; do
    step "sanitize_$tool" 300 bash -c "compute-sanitizer --tool $tool --error-exitcode 3 '$BIN/test_cuda_device' &&
        compute-sanitizer --tool $tool --error-exitcode 3 '$BIN/test_cuda_queue'" || status=1
  done
fi

if ((THREADS)); then
  step threads 400 "$BIN/bench_bootstrap" --presets B1 --threads 16,8,4,2,1 --runs 1 --json "$OUT/bootstrap_threads.json"
  for t in 1 2 4 8 16; do
    step "primitives_$t" 120 "$BIN/bench_primitives" --presets S4 --threads "$t" --json "$OUT/primitives_S4_t$t.json"
  done
  python3 "$ROOT/bench/report_thread_scaling.py" "$OUT"/primitives_S4_t*.json --json "$OUT/thread_scaling.json" \
      --out "$OUT/thread_scaling.md"
fi
exit "$status"
