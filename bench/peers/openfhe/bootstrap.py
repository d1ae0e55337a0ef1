#!/usr/bin/env python3
"""Benchmark of OpenFHE 1.6.1's CKKS bootstrapping (EvalBootstrap) through its Python package.

Measured the way bench/peers/lattigo/bootstrap.go measures Lattigo's and bench/bench_bootstrap.cpp oboro's,
with the same inputs and metrics, and written as JSON with the keys of Lattigo's bootstrap mode.

It measures, for one configuration (the one PEERS.md "Bootstrapping of the other libraries" found to work
at N = 2^16: levelBudget [3, 3], 50-bit scaling primes, dnum 4, SPARSE_ENCAPSULATED secret, FLEXIBLEAUTO,
HEStd_128_classic, full slots, 10 levels after bootstrapping):

- params_s: GenCryptoContext; keygen_s: EvalBootstrapSetup + KeyGen + EvalMultKeyGen + EvalBootstrapKeyGen
  together; setup_s: EvalBootstrapSetup alone (its DFT plaintexts, Lattigo's NewEvaluator), so keygen_s
  includes setup_s here, unlike Lattigo's JSON where the two are disjoint;
- keys / key_gib: the relinearization and automorphism keys (rotations, conjugation, the encapsulation keys
  of SPARSE_ENCAPSULATED) and their size as serialized (SerializeEvalMultKey + SerializeEvalAutomorphismKey,
  binary, to a temporary directory: about 7.3 GB of files at N = 2^16, deleted at once);
- bootstrap_median_s / bootstrap_min_s / bootstrap_runs: `--repeat` timed EvalBootstrap calls after an
  untimed one whose result is checked first (inputs: the complex unit disk, r = sqrt(U), angle 2 pi U);
- precision_bits / mean_precision_bits: -log2 of the largest complex error over the slots and the mean over
  the slots of -log2 |error| (Lattigo's AVG Prec; 60 for an exact slot), worst over every run, warm-up
  included; constant_precision_bits: the same for one more bootstrap of all ones;
- levels_left: the number of ct x ct multiplications the bootstrapped ciphertext still allows, checked by
  multiplying it by itself until a product is wrong or OpenFHE refuses;
- peak_gib: the process's peak resident memory (ru_maxrss).

Run (from the repository root). At N = 2^16 it takes several minutes (about 4 at 1 thread) and about
12.5 GiB of memory, by the PEERS.md run of this configuration, plus about 7.3 GB of free disk under $TMPDIR
(or /tmp) for the key files; give it the machine alone (with OpenMP, a core shared with another process
slows every operation down many times):

    .peers/py310/bin/python bench/peers/openfhe/bootstrap.py --threads 1 --out docs/benchmarks/bootstrap_openfhe.json

`--quick` runs the same circuit on N = 2^12 (2^11 slots, 3 levels after bootstrapping, no security at all)
as a smoke test of a few seconds. `--threads T` sets OMP_NUM_THREADS before OpenFHE is loaded.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

# python/oboro/compare (precision.py: NumPy only), imported by path: this interpreter has no oboro
PRECISION_DIR = Path(__file__).resolve().parents[3] / "python" / "oboro" / "compare"
sys.path.insert(0, str(PRECISION_DIR))

LEVEL_BUDGET = [3, 3]
SCALING_MOD_SIZE = 50
# EvalBootstrap refuses round(log2(q0 / scale)) above its correction factor, which is 8 at N = 2^16 with 2^15
# slots (PEERS.md: 60/40 was refused, "Degree [20] must be less than or equal to the correction factor [8]"),
# so 60 over 50-bit primes (10 bits) does not fit; q0 one bit above the scale, as 59/60 in OpenFHE's examples.
FIRST_MOD_SIZE = SCALING_MOD_SIZE + 1
NUM_LARGE_DIGITS = 4
SEED = 1
# Worse than this after the warm-up is a broken set-up (40-bit primes give about -0.6 bits), not a slow one.
MIN_BOOTSTRAP_BITS = 5.0
# A product after bootstrapping counts as a usable level when its largest error is below 2^-4 (a product
# past the last level comes out at about 0 bits, i.e. garbage, or is refused).
MIN_PRODUCT_BITS = 4.0


def log(msg):
    print(f"[openfhe] {msg}", file=sys.stderr, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="JSON output file (default: stdout)")
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for OpenFHE (default 1)")
    ap.add_argument("--repeat", type=int, default=3, help="timed bootstraps after the warm-up (default 3)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: N = 2^12, 2^11 slots, 3 levels after bootstrapping, HEStd_NotSet")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    args.repeat = max(1, args.repeat)
    return args


def main():
    args = parse_args()
    # OpenMP reads OMP_NUM_THREADS once, when OpenFHE's library is loaded: set it before the import.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import openfhe as fhe
    from precision import error_bits  # oboro compare's one metric (PRECISION_DIR)

    version = ".".join(fhe.__version__.split(".")[:3])
    if args.quick:
        log_n, levels_after, security = 12, 3, fhe.SecurityLevel.HEStd_NotSet
    else:
        log_n, levels_after, security = 16, 10, fhe.SecurityLevel.HEStd_128_classic
    slots = 1 << (log_n - 1)
    key_dist = fhe.SecretKeyDist.SPARSE_ENCAPSULATED
    param_set = f"lb{LEVEL_BUDGET[0]}{LEVEL_BUDGET[1]}-s{SCALING_MOD_SIZE}-dnum{NUM_LARGE_DIGITS}-sparse-encapsulated"
    if args.quick:
        param_set = "quick-n12-" + param_set
    boot_depth = fhe.CryptoContext.GetBootstrapDepth(LEVEL_BUDGET, key_dist)
    depth = levels_after + boot_depth

    log(f"context: N = 2^{log_n}, {slots} slots, depth {depth} ({levels_after} + {boot_depth} for bootstrapping), "
        f"{args.threads} thread(s)")
    t0 = time.perf_counter()
    p = fhe.CCParamsCKKSRNS()
    p.SetSecretKeyDist(key_dist)
    p.SetSecurityLevel(security)
    p.SetRingDim(1 << log_n)
    p.SetBatchSize(slots)
    p.SetCKKSDataType(fhe.CKKSDataType.COMPLEX)
    p.SetScalingTechnique(fhe.ScalingTechnique.FLEXIBLEAUTO)
    p.SetKeySwitchTechnique(fhe.KeySwitchTechnique.HYBRID)
    p.SetScalingModSize(SCALING_MOD_SIZE)
    p.SetFirstModSize(FIRST_MOD_SIZE)
    p.SetNumLargeDigits(NUM_LARGE_DIGITS)
    p.SetMultiplicativeDepth(depth)
    cc = fhe.GenCryptoContext(p)
    for feature in (fhe.PKESchemeFeature.PKE, fhe.PKESchemeFeature.KEYSWITCH, fhe.PKESchemeFeature.LEVELEDSHE,
                    fhe.PKESchemeFeature.ADVANCEDSHE, fhe.PKESchemeFeature.FHE):
        cc.Enable(feature)
    params_s = time.perf_counter() - t0
    if cc.GetRingDimension() != 1 << log_n:
        sys.exit(f"[openfhe] asked for N = 2^{log_n}, OpenFHE chose {cc.GetRingDimension()}")
    # GetModulus() is a double in the Python binding (infinite above 2^1024): the nominal size instead
    log_q = FIRST_MOD_SIZE + depth * SCALING_MOD_SIZE

    # OpenFHE's order: the set-up (DFT plaintexts, EvalMod coefficients) first, then the keys.
    log("keys...")
    t0 = time.perf_counter()
    cc.EvalBootstrapSetup(LEVEL_BUDGET, [0, 0], slots)  # correction factor 0: OpenFHE's default
    setup_s = time.perf_counter() - t0
    correction = cc.GetCKKSBootCorrectionFactor()
    if FIRST_MOD_SIZE - SCALING_MOD_SIZE > correction:
        sys.exit(f"[openfhe] q0 is {FIRST_MOD_SIZE - SCALING_MOD_SIZE} bits above the scale, over the correction "
                 f"factor {correction}: EvalBootstrap would refuse it")
    kp = cc.KeyGen()
    cc.EvalMultKeyGen(kp.secretKey)
    cc.EvalBootstrapKeyGen(kp.secretKey, slots)
    keygen_s = time.perf_counter() - t0
    log(f"keys: {keygen_s:.1f} s (set-up {setup_s:.1f} s)")

    tag = kp.secretKey.GetKeyTag()
    auto_indices = list(cc.GetExistingEvalAutomorphismKeyIndices(tag))
    relin_keys = len(cc.GetEvalMultKeyVector(tag))
    cyclotomic = 2 << log_n
    conjugation = sum(1 for i in auto_indices if i == cyclotomic - 1)
    # Automorphism indices are odd; the two even entries of the map are SPARSE_ENCAPSULATED's dense <-> sparse
    # switching keys, stored beside the Galois keys.
    special = sum(1 for i in auto_indices if i % 2 == 0)
    rotations = len(auto_indices) - conjugation - special
    keys = len(auto_indices) + relin_keys

    rng = np.random.default_rng(SEED)
    radius = np.sqrt(rng.random(slots))  # sqrt of a uniform radius: uniform over the disk's area
    angle = 2 * np.pi * rng.random(slots)
    values = radius * np.exp(1j * angle)
    ones = np.ones(slots, dtype=np.complex128)

    # As in OpenFHE's bootstrapping examples: encoded at level depth - 1 (2 towers left, one of which
    # EvalBootstrap spends on the correction-factor scaling), noise-scale degree 1, encrypted with the public key.
    input_level = depth - 1

    def encrypt(v):
        pt = cc.MakeCKKSPackedPlaintext(v, 1, input_level, None, slots)
        return cc.Encrypt(kp.publicKey, pt)

    def decrypt(ct):
        pt = cc.Decrypt(kp.secretKey, ct)
        pt.SetLength(slots)
        return np.asarray(pt.GetCKKSPackedValue(), dtype=np.complex128)

    ct_in = encrypt(values)
    in_level, in_towers = ct_in.GetLevel(), depth + 1 - ct_in.GetLevel()

    def bootstrap_once():
        t = time.perf_counter()
        out = cc.EvalBootstrap(ct_in)  # one iteration, no Meta-BTS precision target
        return out, time.perf_counter() - t

    log("bootstrap 0 (untimed)...")
    out, warm_s = bootstrap_once()
    worst, mean = error_bits(decrypt(out), values)
    log(f"bootstrap 0: {warm_s:.2f} s, {worst:.1f} bits (mean {mean:.1f})")
    if worst < MIN_BOOTSTRAP_BITS:
        sys.exit(f"[openfhe] warm-up bootstrap: {worst:.1f} bits (< {MIN_BOOTSTRAP_BITS}): not timed")
    out_level, out_nsd = out.GetLevel(), out.GetNoiseScaleDeg()
    formula_levels = depth - out_level - (out_nsd - 1)

    runs = []
    cpu0 = time.process_time()
    for r in range(args.repeat):
        log(f"bootstrap {r + 1}/{args.repeat}...")
        out, d = bootstrap_once()
        runs.append(d)
        w, m = error_bits(decrypt(out), values)
        worst, mean = min(worst, w), min(mean, m)
        log(f"bootstrap {r + 1}/{args.repeat}: {d:.2f} s, {w:.1f} bits")
    cpu_ratio = (time.process_time() - cpu0) / max(sum(runs), 1e-9)  # includes the decryptions: a rough figure
    shared_cores = args.threads > 1 and cpu_ratio < 1.2
    if shared_cores:
        log(f"warning: {args.threads} threads but CPU/wall {cpu_ratio:.2f}: the cores seem busy with another process")

    # Levels left: multiply the bootstrapped ciphertext by itself (out^2, out^3, ...: each product one ct x ct
    # multiplication deeper, the error growing linearly) until a product is wrong or OpenFHE refuses it.
    log("levels...")
    product, verified, product_bits, stop = out, 0, [], None
    want = values.copy()
    for k in range(1, formula_levels + 2):
        want = want * values
        try:
            product = cc.EvalMult(product, out)
            bits, _ = error_bits(decrypt(product), want)
        except Exception as e:  # OpenFHE raises past the last tower
            stop = f"multiplication {k} raised: {str(e).strip().splitlines()[-1][-160:]}"
            break
        if bits < MIN_PRODUCT_BITS:
            stop = f"multiplication {k} is wrong ({bits:.1f} bits, no error raised)"
            break
        verified, product_bits = k, product_bits + [bits]
    if stop is None:
        stop = f"stopped after {verified}, one past OpenFHE's count"
    del product
    levels_left = verified
    log(f"levels: {verified} multiplications verified ({stop})")

    log("bootstrap of all ones...")
    ones_out = cc.EvalBootstrap(encrypt(ones))
    constant_bits, _ = error_bits(decrypt(ones_out), ones)
    del ones_out

    # Key bytes as serialized: the relinearization key(s) and the automorphism map (which holds the
    # bootstrapping keys), binary, one file each, removed as soon as measured.
    log("key sizes (serializing)...")
    key_gib, key_note = None, None
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="openfhe-keys-") as tmp:
            mult_file = os.path.join(tmp, "mult.bin")
            if not fhe.CryptoContext.SerializeEvalMultKey(mult_file, fhe.BINARY, tag):
                raise RuntimeError("SerializeEvalMultKey returned false")
            mult_bytes = os.path.getsize(mult_file)
            os.remove(mult_file)
            need = 1.2 * mult_bytes * len(auto_indices)  # each automorphism key is the size of the relin key
            free = shutil.disk_usage(tmp).free
            if free < need:
                raise RuntimeError(f"{free / 1e9:.1f} GB free in {tmp}, about {need / 1e9:.1f} GB needed")
            auto_file = os.path.join(tmp, "auto.bin")
            if not fhe.CryptoContext.SerializeEvalAutomorphismKey(auto_file, fhe.BINARY, tag):
                raise RuntimeError("SerializeEvalAutomorphismKey returned false")
            auto_bytes = os.path.getsize(auto_file)
            os.remove(auto_file)
        key_gib = (mult_bytes + auto_bytes) / (1 << 30)
        key_note = (f"key_gib: SerializeEvalMultKey ({mult_bytes / 1e6:.1f} MB) + SerializeEvalAutomorphismKey "
                    f"({auto_bytes / 1e9:.3f} GB, {len(auto_indices)} keys), binary; serializing took "
                    f"{time.perf_counter() - t0:.1f} s (not in any timing)")
    except Exception as e:
        key_note = f"key_gib: null, serialization failed: {e}"
    log(key_note)

    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20)

    notes = [
        f"OpenFHE {fhe.__version__} (PyPI openfhe); CKKS, ring dimension 2^{log_n}, {slots} complex slots (full, "
        f"CKKSDataType COMPLEX), {'HEStd_NotSet' if args.quick else 'HEStd_128_classic'}, SPARSE_ENCAPSULATED "
        f"secret, FLEXIBLEAUTO, HYBRID key switching, dnum (NumLargeDigits) {NUM_LARGE_DIGITS}",
        f"chain: scalingModSize {SCALING_MOD_SIZE}, firstModSize {FIRST_MOD_SIZE}, depth {depth} = {levels_after} "
        f"levels after bootstrapping + GetBootstrapDepth([{LEVEL_BUDGET[0]}, {LEVEL_BUDGET[1]}], "
        f"SPARSE_ENCAPSULATED) = {boot_depth}; logQ = {log_q} bits nominal (firstModSize + depth x scalingModSize; P chosen by OpenFHE, not exposed)",
        f"EvalBootstrapSetup(levelBudget [{LEVEL_BUDGET[0]}, {LEVEL_BUDGET[1]}], dim1 [0, 0], slots {slots}), "
        f"default correction factor (GetCKKSBootCorrectionFactor = {correction}); EvalBootstrap with 1 iteration",
        f"firstModSize {FIRST_MOD_SIZE}, not 60: EvalBootstrap refuses round(log2(q0/scale)) above the correction "
        "factor (8 at N = 2^16 with 2^15 slots, PEERS.md), and 60 - 50 = 10; 40-bit scaling primes are accepted "
        "but give garbage silently (PEERS.md), so 50",
        f"input: MakeCKKSPackedPlaintext at level {in_level} = depth - 1 ({in_towers} towers), noise-scale degree 1, "
        "encrypted with the public key, as in OpenFHE's bootstrapping examples; the same ciphertext for every run",
        f"output: level {out_level}, noise-scale degree {out_nsd}; OpenFHE's count depth - level - (degree - 1) = "
        f"{formula_levels}",
        f"levels_left: {verified} ct x ct multiplications verified on the output (out^2 ... out^{verified + 1}, "
        f"each with a max error below 2^-{MIN_PRODUCT_BITS:g}"
        + (f"; worst {min(product_bits):.1f} bits" if product_bits else "") + f"); then {stop}",
        f"keygen_s = EvalBootstrapSetup + KeyGen + EvalMultKeyGen + EvalBootstrapKeyGen ({keygen_s:.1f} s), "
        f"so it includes setup_s ({setup_s:.1f} s, EvalBootstrapSetup alone: DFT plaintexts); keygen without "
        f"set-up {keygen_s - setup_s:.1f} s. Lattigo's keygen_s excludes its setup_s",
        f"keys: {keys} = {rotations} rotation keys + {conjugation} conjugation + {special} SPARSE_ENCAPSULATED "
        f"switching keys (even indices of the automorphism map) + {relin_keys} relinearization",
        key_note,
        f"warm-up bootstrap {warm_s:.2f} s (untimed); precision: worst over the warm-up and the timed runs; "
        "mean_precision_bits is the mean over slots of -log2|error| capped at 60 (Lattigo's AVG Prec); values "
        f"uniform in the complex unit disk (numpy default_rng({SEED})), error against the input values",
        f"threads: OMP_NUM_THREADS={args.threads} set before OpenFHE is loaded; CPU time / wall time over the "
        f"timed bootstraps (with their decryptions) = {cpu_ratio:.2f}",
        "peak_gib: ru_maxrss of the process at the end (serialization included)",
    ]
    if shared_cores:
        notes.append(f"warning: CPU/wall {cpu_ratio:.2f} with {args.threads} threads: the cores were probably shared "
                     "with another process (OpenMP's barriers then cost far more than the work); timings not usable")
    if args.quick:
        notes.append("quick: the same circuit on N = 2^12 with 3 levels after bootstrapping; no security "
                     "(HEStd_NotSet), smoke tests only")

    result = {
        "library": "openfhe",
        "version": version,
        "param_set": param_set,
        "log_n": log_n,
        "slots": slots,
        "levels_left": levels_left,
        "params_s": params_s,
        "keygen_s": keygen_s,
        "setup_s": setup_s,
        "keys": keys,
        "key_gib": key_gib,
        "bootstrap_median_s": statistics.median(runs),
        "bootstrap_min_s": min(runs),
        "bootstrap_runs": runs,
        "precision_bits": worst,
        "mean_precision_bits": mean,
        "constant_precision_bits": constant_bits,
        "peak_gib": peak_gib,
        "threads": args.threads,
        "notes": notes,
    }
    text = json.dumps(result, indent=2) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        log(f"wrote {args.out}")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
