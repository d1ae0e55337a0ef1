#!/usr/bin/env bash
# Regenerates every benchmark figure under docs/benchmarks/ (tables, JSON and plots), one
# program after the other. Run it on a quiet machine, after `bash scripts/setup.sh` (which builds
# build/ and .venv/): the figures are medians, but other work on the machine still shifts them.
# The comparison with the other libraries needs them installed (scripts/install_peers.sh, and
# `make -C bench/peers/lattigo`); missing ones are reported as skipped.
#
#   bash scripts/bench_docs.sh            # everything (about three hours on 2 cores)
#   bash scripts/bench_docs.sh trace matmul   # only the named steps
#
# Steps: primitives kernels keyswitch trace batch matmul serialization genome distributed compare chain polynomial polynomial_precision
# polynomial_scale50 bootstrap
# (precision is left out: it does not depend on speed; build/bench/bench_precision regenerates it).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
OUT=docs/benchmarks
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(primitives kernels keyswitch trace batch matmul serialization genome distributed compare chain polynomial polynomial_precision polynomial_scale50 bootstrap)

for tool in build/bench/bench_primitives "$PY"; do
    [ -x "$tool" ] || { echo "bench_docs: $tool is missing; run 'bash scripts/setup.sh' first" >&2; exit 1; }
done

# A virtual machine backs its memory the first time it is touched, which is slow (on the VM of
# 2026-11-29: 67 s for 18 GiB the first time, 10 s after): touch most of the free memory once, so
# that no step (and no library of the comparison, oboro running first) pays for it.
"$PY" - <<'PYEOF'
import numpy as np
with open("/proc/meminfo") as f:
    avail = next(int(l.split()[1]) * 1024 for l in f if l.startswith("MemAvailable:"))
np.ones(int(avail * 0.8), dtype=np.uint8)  # written in full, then freed
PYEOF

run() {
    echo "== bench_docs: $1 ($(date -u +%H:%M:%S))" >&2
    shift
    "$@"
}

for step in "${steps[@]}"; do
    case "$step" in
        primitives)
            run primitives build/bench/bench_primitives --presets S1,S2,S4 --json $OUT/primitives.json
            "$PY" bench/report_primitives.py $OUT/primitives.json --out $OUT/primitives.md ;;
        kernels) run kernels build/bench/bench_kernels --json $OUT/kernels.json --markdown $OUT/kernels.md ;;
        keyswitch)
            # every operation beside the sum of its kernels (key switching) or its bound (the rest)
            run keyswitch build/bench/bench_keyswitch --json $OUT/keyswitch.json --markdown $OUT/keyswitch.md ;;
        trace)
            run trace build/bench/bench_trace --json $OUT/trace.json --markdown $OUT/trace.md
            "$PY" bench/plot_trace.py $OUT/trace.json --out $OUT/trace.png ;;
        batch) run batch build/bench/bench_batch --publish ;;
        matmul) run matmul build/bench/bench_matmul --trials 1000 --out $OUT ;;
        serialization)
            run serialization "$PY" bench/bench_serialization.py --json $OUT/serialization.json \
                --markdown $OUT/serialization.md ;;
        genome)
            run genome "$PY" examples/genome_search/genome_search.py --records 10000 --json $OUT/genome_search.json \
                --markdown $OUT/genome_search.md --no-progress ;;
        distributed)
            # a local Ray cluster of 1 and 2 CPUs against one process (needs Ray: pip install 'oboro[ray]')
            run distributed "$PY" bench/bench_distributed.py --json $OUT/distributed.json \
                --markdown $OUT/distributed.md --docs docs/distributed.md ;;
        compare)
            run compare .venv/bin/oboro compare --s4 --json $OUT/compare.json --markdown $OUT/compare.md --plot $OUT ;;
        chain)
            run chain .venv/bin/oboro compare --chain --json $OUT/compare_chain.json \
                --markdown $OUT/compare_chain.md --plot $OUT ;;
        polynomial)
            # N = 2^15: at the default 2^16 the run takes about 25 minutes on 2 cores (docs/compare.md)
            run polynomial .venv/bin/oboro compare --circuits --circuits-log-n 15 --json $OUT/polynomial.json \
                --markdown $OUT/polynomial.md --plot $OUT
            # the dense slots x slots matrix where its diagonals fit (N = 2^13, one level)
            run matvec_full_slot .venv/bin/oboro compare --circuits --circuits-log-n 13 --circuits-cases matvec \
                --matvec-sizes full --json $OUT/matvec_full_slot.json --markdown $OUT/matvec_full_slot.md ;;
        polynomial_precision)
            # the precision of the circuits where libraries come within half a bit of each other, on 25
            # fresh encryptions each (the 3 of the polynomial step resolve about half a bit): about 12 minutes
            run polynomial_precision .venv/bin/oboro compare --circuits --circuits-log-n 15 \
                --circuits-cases chebyshev,sigmoid,inverse,sqrt,scale --circuits-degrees 7,15,63 --check-encryptions 25 \
                --libraries oboro,lattigo,desilofhe --threads 1 --repeat 1 --min-seconds 0 \
                --json $OUT/polynomial_precision.json --markdown $OUT/polynomial_precision.md
            # what the map of the interval onto [-1, 1] costs the sigmoid's precision (docs/compare.md)
            run sigmoid_map_precision "$PY" bench/sigmoid_map_precision.py --json $OUT/sigmoid_map_precision.json ;;
        polynomial_scale50)
            # the circuits on the shared chain with 50-bit scaling primes (2^50 scale) instead of 40:
            # desilofhe keeps its own chain, so its precision is compared at a scale like its own
            # (docs/compare.md); about 50 minutes on 2 cores, most of it desilofhe's series
            run polynomial_scale50 .venv/bin/oboro compare --circuits --circuits-log-n 15 --circuits-scale-bits 50 \
                --circuits-cases chebyshev,sigmoid,inverse,sqrt,matvec,scale --check-encryptions 5 \
                --json $OUT/polynomial_scale50.json --markdown $OUT/polynomial_scale50.md
            # oboro beside Lattigo on that chain, 25 encryptions each (their ties): about 13 minutes
            run polynomial_precision_scale50 .venv/bin/oboro compare --circuits --circuits-log-n 15 --circuits-scale-bits 50 \
                --circuits-cases chebyshev,sigmoid,inverse,sqrt,matvec,scale --circuits-degrees 7,15,63 --check-encryptions 25 \
                --libraries oboro,lattigo --threads 1 --repeat 1 --min-seconds 0 \
                --json $OUT/polynomial_precision_scale50.json --markdown $OUT/polynomial_precision_scale50.md ;;
        bootstrap)
            # every library in a process of its own, one at a time: about 45 minutes on 2 cores
            run bootstrap .venv/bin/oboro compare --bootstrap --json $OUT/bootstrap.json \
                --markdown $OUT/bootstrap.md --plot $OUT ;;
        *) echo "bench_docs: unknown step '$step'" >&2; exit 2 ;;
    esac
done
echo "== bench_docs: done ($(date -u +%H:%M:%S)); review 'git diff --stat docs/benchmarks' and commit" >&2
