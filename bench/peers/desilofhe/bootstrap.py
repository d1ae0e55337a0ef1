#!/usr/bin/env python3
"""Benchmark of desilofhe 2.0's CKKS bootstrapping (CPU, small bootstrap key) through its Python package.

Measured as bench/peers/openfhe/bootstrap.py measures OpenFHE's (same inputs, metrics and JSON keys), for
the configuration of PEERS.md with the least memory: Engine(mode='cpu', bootstrap=True), which fixes
N = 2^16, 2^15 slots and its own modulus chain; the small bootstrap key with the relinearization,
conjugation and roll keys (bootstrap(ct, relin, conj, roll, small_bootstrap_key)).

- keygen_s: the secret, public, relinearization, conjugation, roll and small bootstrap keys (desilofhe has
  no separate set-up step: any precomputation is inside these calls or the first bootstrap);
- keys / key_gib: those four evaluation keys and their nbytes (in memory);
- bootstrap_*: `--repeat` timed bootstraps after an untimed one whose result is checked (about 150 s each
  on this machine class, PEERS.md); precision as the other programs, worst over every run; the
  bootstrap of all ones once more;
- levels_left: the output ciphertext's level (desilofhe returns it at the engine's max level);
- peak_gib: ru_maxrss of the process.

Run (from the repository root, under the peers' Python; minutes per bootstrap):

    .peers/py310/bin/python bench/peers/desilofhe/bootstrap.py --threads 1 --repeat 1
"""
import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

# python/oboro/compare (precision.py: NumPy only), imported by path: this interpreter has no oboro
PRECISION_DIR = Path(__file__).resolve().parents[3] / "python" / "oboro" / "compare"
sys.path.insert(0, str(PRECISION_DIR))

SEED = 1
MIN_BOOTSTRAP_BITS = 5.0


def log(msg):
    print(f"[desilofhe] {msg}", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="Engine(thread_count=...) (default 1)")
    ap.add_argument("--repeat", type=int, default=1, help="timed bootstraps after the checked one (default 1)")
    args = ap.parse_args()
    import importlib.metadata

    import desilofhe
    import numpy as np
    from precision import error_bits  # oboro compare's one metric (PRECISION_DIR)

    version = importlib.metadata.version("desilofhe")
    t0 = time.perf_counter()
    engine = desilofhe.Engine(mode="cpu", bootstrap=True, thread_count=args.threads)
    params_s = time.perf_counter() - t0
    slots = engine.slot_count
    log(f"engine: {slots} slots, max level {engine.max_level}, {args.threads} thread(s); keys...")
    t0 = time.perf_counter()
    sk = engine.create_secret_key()
    pk = engine.create_public_key(sk)
    relin = engine.create_relinearization_key(sk)
    conj = engine.create_conjugation_key(sk)
    roll = engine.create_roll_key(sk)
    small = engine.create_small_bootstrap_key(sk)
    keygen_s = time.perf_counter() - t0
    keys = [relin, conj, roll, small]
    key_bytes = {type(k).__name__: k.nbytes for k in keys}
    log(f"keys: {keygen_s:.1f} s, {sum(key_bytes.values()) / 1e9:.2f} GB")

    rng = np.random.default_rng(SEED)
    values = np.sqrt(rng.random(slots)) * np.exp(2j * np.pi * rng.random(slots))
    ones = np.ones(slots, dtype=np.complex128)
    ct = engine.encrypt(values, pk, level=0)

    def bootstrap_once(c):
        t = time.perf_counter()
        out = engine.bootstrap(c, relin, conj, roll, small)
        return out, time.perf_counter() - t

    log("bootstrap 0 (untimed)...")
    out, warm_s = bootstrap_once(ct)
    worst, mean = error_bits(engine.decrypt(out, sk), values)
    log(f"bootstrap 0: {warm_s:.1f} s, {worst:.1f} bits (mean {mean:.1f})")
    if worst < MIN_BOOTSTRAP_BITS:
        sys.exit(f"[desilofhe] warm-up bootstrap: {worst:.1f} bits (< {MIN_BOOTSTRAP_BITS}): not timed")
    levels_left = out.level
    runs = []
    for r in range(args.repeat):
        log(f"bootstrap {r + 1}/{args.repeat}...")
        out, d = bootstrap_once(ct)
        runs.append(d)
        w, m = error_bits(engine.decrypt(out, sk), values)
        worst, mean = min(worst, w), min(mean, m)
    if not runs:
        runs = [warm_s]
    log("bootstrap of all ones...")
    ones_out, _ = bootstrap_once(engine.encrypt(ones, pk, level=0))
    constant_bits, _ = error_bits(engine.decrypt(ones_out, sk), ones)

    notes = [
        f"desilofhe {version} (PyPI), CPU: Engine(mode='cpu', bootstrap=True, thread_count={args.threads}), which fixes "
        f"N = 2^16, {slots} slots and its own modulus chain (max level {engine.max_level})",
        "small bootstrap key: bootstrap(ct, relinearization, conjugation, roll, small bootstrap key); input "
        "encrypted with the public key at level 0",
        "keys: " + ", ".join(f"{k} {b / 1e9:.2f} GB" for k, b in key_bytes.items()) + " (nbytes, in memory)",
        f"keygen_s: the secret, public and those four keys (no separate set-up step); warm-up bootstrap "
        f"{warm_s:.1f} s (untimed){'' if args.repeat else ', and the only one: --repeat 0'}",
        "precision: worst over the warm-up and the timed runs; values uniform in the complex unit disk "
        f"(numpy default_rng({SEED}))",
    ]
    json.dump({
        "library": "desilofhe", "version": version, "param_set": "bootstrap=True, small bootstrap key",
        "log_n": 16, "slots": slots, "levels_left": levels_left, "params_s": params_s, "keygen_s": keygen_s,
        "setup_s": 0.0, "keys": len(keys), "key_gib": sum(key_bytes.values()) / 2**30,
        "bootstrap_median_s": statistics.median(runs), "bootstrap_min_s": min(runs), "bootstrap_runs": runs,
        "precision_bits": worst, "mean_precision_bits": mean, "constant_precision_bits": constant_bits,
        "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "threads": args.threads,
        "notes": notes,
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
