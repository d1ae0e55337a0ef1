"""The measuring side of `oboro compare`: one library, one parameter set, one thread count, in one process.

    <python> worker.py < task.json > result.json

The runner starts this script once per (library, preset, threads) or (library, depth) so that each
measurement has a process of its own: its peak RSS (read by the runner with os.wait4) is that of one
library alone, and no library's threads or allocator state leak into another's figures.

It runs under the interpreter where the library is installed: oboro's adapter under oboro's Python,
OpenFHE's under a CPython 3.10 (its only wheel that runs here). So this file and the adapters use
the standard library and NumPy only, never the oboro package (a C++ extension built for one Python);
the timing loop comes from oboro/timing.py, imported by path for the same reason.

Each adapter module defines `Adapter(params, threads, rotations)`, which builds the library's context
and keys (the relinearization key; with rotations=True also the keys of rotate(1) and of the total
sum, left out of the chain so that its memory is that of the chain alone) and has: slots, version, used (the parameters the library
actually used), notes (what differs from the others), key_sizes (serialized bytes of the public,
relinearization and, with rotations, one rotation key); prepare_input(x) (NumPy array -> the library's input type,
before any clock starts), encode/decode, encrypt (encode + public-key encryption), decrypt (decrypt
+ decode), add, multiply_plain(ct, pt) (ct times a plaintext that encode() made, at the top level, and
the rescale), multiply (ct * ct with relinearization and rescale), rotate (one slot to the left),
total_sum (every slot, or at least slot 0, gets the sum of all slots) and ciphertext_bytes. Results
are new objects; operands stay unchanged, so each timed call sees the same input. Key generation
(protocol.KEYGEN_OPS, timed last): relin_keygen(state) makes a relinearization key (state: what the
optional relin_keygen_setup() returned, untimed, or None), rotation_keygen(step) the key of one
rotation step; relin_keygen_check(x, y) and rotation_keygen_check(x, step) make a key the same way
and return the decrypted product of x and y (rotation of x by step) computed with it.

For the chain mode's BFV / BGV runs (scheme "bfv" / "bgv"; OpenFHE only on the Python side) the module
defines `IntegerAdapter(params, threads, scheme)` with slots, plain_modulus, prepare_input, encrypt,
multiply (with relinearization, and the modulus switch for BGV), decrypt and the same metadata.

For the bootstrap mode (mode "bootstrap", `oboro compare --bootstrap`; oboro only) the module defines
`bootstrap_row(task, log)`, which returns one row of the bootstrapping table (see bootstrap.py).

For the circuits mode (mode "circuits", `oboro compare --circuits`) the module defines
`CircuitAdapter(params, threads)` with slots, version, used, notes, decrypt(ct, n) (the first n
slots), consumed(ct_in, ct_out) (levels the circuit used, in the library's own counting) and
circuit(case, x, matrix) -> (input ciphertext, the timed call, what the library chose: degree,
iterations, algorithm); it raises NotImplementedError(reason) for a circuit it cannot run, and the
row says so. run_circuits checks each result against NumPy (the check call is the warm-up) and then
times it.

The task (JSON on stdin): library, mode ("ops", "chain" or "circuits"), scheme ("ckks", or "bfv"/"bgv" in chain
mode), params (log_n, moduli_bits, special_bits, scale_bits, dnum; plain_modulus for BFV/BGV), threads,
repeat, min_seconds, ops (mode ops) or depth (mode chain) or cases (mode circuits: key, kind, degree,
interval, coeffs, bits, size, seed; see command.plan_circuits), seed.
The result (JSON on stdout): the library's version, the parameters it actually used and notes, the
median times in microseconds, the checks (max abs error of every op against NumPy) and key sizes.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/oboro: for timing.py (stdlib-only) without the package
from timing import measure  # noqa: E402

try:  # run as a script (by the runner): this directory is on sys.path
    from precision import error_bits  # noqa: E402
    from protocol import KEYGEN_OPS  # noqa: E402
except ImportError:  # imported as oboro.compare.worker (the tests)
    from .precision import error_bits  # noqa: E402
    from .protocol import KEYGEN_OPS  # noqa: E402

#: adapter module (in this directory) of each Python library
ADAPTERS = {"oboro": "adapter_oboro", "openfhe": "adapter_openfhe", "seal": "adapter_seal", "desilofhe": "adapter_desilofhe"}



class Inputs:
    """The operands: two full slot vectors x, y in [-1, 1] (chain: x in [0.999, 1], so x^(2^10) stays near 0.36)."""

    def __init__(self, slots: int, seed: int, chain: bool = False):
        rng = np.random.default_rng(seed)
        lo = 0.999 if chain else -1.0
        self.x = rng.uniform(lo, 1.0, slots)
        self.y = rng.uniform(-1.0, 1.0, slots)


def _err(got, want) -> float:
    got = np.asarray(got, dtype=np.float64)[: len(want)]
    return float(np.max(np.abs(got - want)))


def run_ops(ad, task: dict) -> dict:
    """Checks every op once (not timed), then times the requested ops on fresh operands."""
    inp = Inputs(ad.slots, task.get("seed", 42))
    x, y = inp.x, inp.y
    vx = ad.prepare_input(x)  # the library's input type (e.g. a list), made before any clock starts
    a, b = ad.encrypt(vx), ad.encrypt(ad.prepare_input(y))
    py = ad.encode(ad.prepare_input(y))  # the plaintext operand, encoded before any clock starts
    checks = {
        "encode": _err(ad.decode(ad.encode(vx)), x),
        "encrypt": _err(ad.decrypt(a), x),
        "decrypt": _err(ad.decrypt(a), x),
        "add": _err(ad.decrypt(ad.add(a, b)), x + y),
        "mul_plain": _err(ad.decrypt(ad.multiply_plain(a, py)), x * y),
        "multiply": _err(ad.decrypt(ad.multiply(a, b)), x * y),
        "rotate": _err(ad.decrypt(ad.rotate(a)), np.roll(x, -1)),
        "sum": _err(ad.decrypt(ad.total_sum(a))[:1], np.array([x.sum()])),
    }
    calls = {
        "encode": lambda: ad.encode(vx),
        "encrypt": lambda: ad.encrypt(vx),
        "decrypt": lambda: ad.decrypt(a),
        "add": lambda: ad.add(a, b),
        "mul_plain": lambda: ad.multiply_plain(a, py),
        "multiply": lambda: ad.multiply(a, b),
        "rotate": lambda: ad.rotate(a),
        "sum": lambda: ad.total_sum(a),
    }
    times = {}

    def timed(op, fn, setup=None):
        t = measure(fn, task["repeat"], task["min_seconds"], setup=setup)
        times[op] = {"median_us": t.median_us, "min_us": t.min_us, "max_us": t.max_us, "repeats": t.repeats}

    for op in task["ops"]:
        if op not in KEYGEN_OPS:
            timed(op, calls[op])
    out = {"sizes": {**ad.key_sizes, "ciphertext": ad.ciphertext_bytes(a)}}
    # Key generation last: the peak memory of the ops above is read first, since the rotation keys
    # made below (one for a new step each call, kept where the library keeps them) would add to it.
    out["peak_rss_bytes"] = peak_rss_bytes()
    if "relin_keygen" in task["ops"]:
        timed("relin_keygen", ad.relin_keygen, getattr(ad, "relin_keygen_setup", None))
        checks["relin_keygen"] = _err(ad.relin_keygen_check(vx, ad.prepare_input(y)), x * y)
    if "rotation_keygen" in task["ops"]:
        # a step without a key each call: down from slots - 1, away from the small steps and the
        # powers of two (times 1, 2 or 3) whose keys the rotation and the total sum made (the
        # libraries that keep keys skip a step they have); MAX_RUNS + 2 < slots / 4
        steps = iter(range(ad.slots - 1, 0, -1))
        timed("rotation_keygen", lambda: ad.rotation_keygen(next(steps)))
        step = next(steps)
        checks["rotation_keygen"] = _err(ad.rotation_keygen_check(vx, step), np.roll(x, -step))
    return {"times": times, "checks": {op: checks[op] for op in task["ops"]}, **out}


def run_chain(ad, task: dict) -> dict:
    """Times depth successive squarings (multiply + relinearize + rescale each) of a fresh ciphertext."""
    depth = task["depth"]
    inp = Inputs(ad.slots, task.get("seed", 42), chain=True)
    chain = _squarings(ad, ad.encrypt(ad.prepare_input(inp.x)), depth)
    check = _err(ad.decrypt(chain()), inp.x ** (2**depth))
    return _chain_result(ad, chain, check, task)


def run_integer_chain(ad, task: dict) -> dict:
    """BFV / BGV: the same chain on integer slots mod t, checked exactly against x^(2^depth) mod t
    (the error is 0 or at least 1, so the chain tolerance passes exact results only)."""
    depth, t = task["depth"], ad.plain_modulus
    x = np.random.default_rng(task.get("seed", 42)).integers(0, t, ad.slots, dtype=np.int64)
    want = x.copy()
    for _ in range(depth):
        want = want * want % t  # t < 2^17: no overflow
    chain = _squarings(ad, ad.encrypt(ad.prepare_input(x)), depth)
    return _chain_result(ad, chain, _err(ad.decrypt(chain()), want.astype(np.float64)), task)


def _squarings(ad, a, depth: int):
    """The timed call of the chain mode: `depth` successive squarings of a (a stays unchanged)."""

    def chain():
        c = a
        for _ in range(depth):
            c = ad.multiply(c, c)
        return c

    return chain


def _chain_result(ad, chain, check: float, task: dict) -> dict:
    t = measure(chain, task["repeat"], task["min_seconds"])
    return {"times": {"chain": {"median_us": t.median_us, "min_us": t.min_us, "max_us": t.max_us, "repeats": t.repeats}},
            "checks": {"chain": check}, "sizes": dict(ad.key_sizes)}


def uniform(seed: int, n: int, lo: float, hi: float):
    """protocol.uniform_at for i = 0 .. n-1 (vectorized SplitMix64; the same doubles as the Go program)."""
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):  # 64-bit wrap-around is the algorithm
        z = (np.uint64(seed) << np.uint64(32)) + i + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return lo + (hi - lo) * ((z >> np.uint64(11)).astype(np.float64) * 2.0**-53)


def circuit_data(case: dict, slots: int):
    """(x, matrix or None, the expected result in double precision) of one circuit case. Functions
    fill every slot with values of their interval; the matrix-vector product takes a vector of `size`
    and a size x size matrix, both uniform in [-1, 1] (the matrix from stream seed + 1)."""
    kind, seed = case["kind"], case["seed"]
    if kind == "matvec":
        n = case["size"]
        x = uniform(seed, n, -1.0, 1.0)
        m = uniform(seed + 1, n * n, -1.0, 1.0).reshape(n, n)
        return x, m, m @ x
    lo, hi = case["interval"]
    x = uniform(seed, slots, lo, hi)
    if kind == "chebyshev":
        u = x if (lo, hi) == (-1.0, 1.0) else (2 * x - lo - hi) / (hi - lo)
        want = np.polynomial.chebyshev.chebval(u, case["coeffs"])
    elif kind == "sigmoid":
        want = 1.0 / (1.0 + np.exp(-x))
    elif kind == "inverse":
        want = 1.0 / x
    elif kind == "sqrt":
        want = np.sqrt(x)
    elif kind == "scale":
        want = case["constant"] * x
    else:
        raise ValueError(f"unknown circuit kind '{kind}'")
    return x, None, want


def run_circuits(ad, task: dict) -> dict:
    """Each case: the library's input ciphertext and call, checked on task["check_encryptions"] fresh
    encryptions of the input (the calls are also the warm-up), then the timed runs. A case the library cannot run goes to "skipped" with its reason, one that raises
    to "errors"; the others still run. Per case: the median and the worst of the encryptions' largest
    errors (checks, check_worst) and the median of their mean bits over the slots (check_mean_bits,
    precision.error_bits: far less noisy than the worst slot)."""
    times, checks, worst, mean_bits, levels, chosen, skipped, errors = {}, {}, {}, {}, {}, {}, {}, {}
    for case in task["cases"]:
        key = case["key"]
        x, m, want = circuit_data(case, ad.slots)
        try:
            # the check on task["check_encryptions"] fresh encryptions of x: the median error (a fresh
            # encryption's noise moves the worst slot by up to 2 bits) and the worst
            errs, means = [], []
            for _ in range(max(1, task.get("check_encryptions", 1))):
                ct, call, chosen[key] = ad.circuit(case, x, m)
                out = call()
                got = np.asarray(ad.decrypt(out, len(want)), dtype=np.float64)
                errs.append(_err(got, want))
                means.append(error_bits(got, want)[1])
                levels[key] = ad.consumed(ct, out)
                del out
            nan = any(e != e for e in errs)
            errs.sort()
            means.sort()
            checks[key] = float("nan") if nan else errs[len(errs) // 2]
            worst[key] = float("nan") if nan else errs[-1]
            mean_bits[key] = float("nan") if nan else means[len(means) // 2]
            t = measure(call, task["repeat"], task["min_seconds"], warm_up=False)
            times[key] = {"median_us": t.median_us, "min_us": t.min_us, "max_us": t.max_us, "repeats": t.repeats}
        except NotImplementedError as e:
            chosen.pop(key, None)
            skipped[key] = str(e)
        except Exception as e:  # noqa: BLE001 - one case's failure is reported, the others still run
            errors[key] = f"{type(e).__name__}: {e}"
        ct = call = None  # this case's ciphertexts, keys and encoded matrix go before the next one's
    return {"times": times, "checks": checks, "check_worst": worst, "check_mean_bits": mean_bits, "levels": levels, "chosen": chosen,
            "skipped_cases": skipped, "errors": errors, "sizes": {}}


def peak_rss_bytes() -> int:
    """This process's peak resident memory (VmHWM). Read here rather than from the parent's rusage:
    Linux carries ru_maxrss across fork + exec, so a child would report at least its parent's peak."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def log(msg: str) -> None:
    """Progress of a long worker (bootstrapping) on stderr, which the runner keeps for its error report."""
    print(f"[worker] {msg}", file=sys.stderr, flush=True)


def main() -> int:
    task = json.load(sys.stdin)
    lib = task["library"]
    scheme = task.get("scheme", "ckks")
    adapter = importlib.import_module(ADAPTERS[lib])
    if task["mode"] == "bootstrap":  # oboro only (bootstrap.py runs the other libraries' own programs)
        row = adapter.bootstrap_row(task, log)
        peak = peak_rss_bytes()
        json.dump({**row, "peak_gib": peak / 2**30, "peak_rss_bytes": peak}, sys.stdout)
        return 0
    t0 = time.perf_counter()
    if task["mode"] == "circuits":
        ad = adapter.CircuitAdapter(task["params"], task["threads"])
    elif scheme == "ckks":
        ad = adapter.Adapter(task["params"], task["threads"], rotations=task["mode"] == "ops")
    else:  # BFV / BGV: chain mode, libraries of INTEGER_SCHEMES only
        ad = adapter.IntegerAdapter(task["params"], task["threads"], scheme)
    setup_s = time.perf_counter() - t0
    if task["mode"] == "circuits":
        body = run_circuits(ad, task)
    elif task["mode"] == "ops":
        body = run_ops(ad, task)
    else:
        body = run_chain(ad, task) if scheme == "ckks" else run_integer_chain(ad, task)
    out = {"library": lib, "scheme": scheme, "version": ad.version, "used": ad.used, "notes": ad.notes,
           "setup_seconds": setup_s, "peak_rss_bytes": peak_rss_bytes(), **body}  # run_ops reads its own peak
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
