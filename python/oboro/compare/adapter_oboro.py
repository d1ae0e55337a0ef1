"""oboro through its Python API ; the interface is in worker.py."""

from __future__ import annotations

import oboro


class Adapter:
    def __init__(self, params: dict, threads: int, rotations: bool):
        oboro.set_num_threads(threads)
        ctx = oboro.Context(log_n=params["log_n"], moduli_bits=params["moduli_bits"],
                            special_bits=params["special_bits"], scale_bits=params["scale_bits"], dnum=params.get("dnum"))
        # Key sizes from the serialized context: with each key added, the growth is that key's size.
        ctx.keygen(rotations=[], relin=False)
        base = len(ctx.serialize(keys=False))
        with_pk = len(ctx.serialize())
        ctx.keygen(rotations=[], relin=True)
        with_rlk = len(ctx.serialize())
        self.key_sizes = {"public": with_pk - base, "relin": with_rlk - with_pk}
        if rotations:
            ctx.keygen(rotations=[1])
            self.key_sizes["rotation"] = len(ctx.serialize()) - with_rlk
            ctx.keygen(rotations=ctx.sum_rotations())
        self.ctx, self.pub, self.params = ctx, ctx.public(), params
        self.slots = ctx.slots
        self.version = oboro.__version__
        self.used = {"N": 2**params["log_n"], "logQ": list(params["moduli_bits"]), "logP": list(params["special_bits"]),
                     "dnum": ctx.dnum if hasattr(ctx, "dnum") else params.get("dnum"), "logQP": ctx.log_qp,
                     "security": "128-bit (oboro's HE-standard check passed)"}
        self.notes = ["keys and ciphertexts serialized with the uniform half of keys as a 32-byte seed (oboro's default)",
                      "total sum: ct.sum() (hoisted rotations, keys of ctx.sum_rotations())"]

    def prepare_input(self, x):
        return x  # NumPy arrays go in as they are

    def encode(self, x):
        return self.ctx.encode(x)

    def decode(self, pt):
        return self.ctx.decode(pt)

    def encrypt(self, x):
        return self.pub.encrypt(x)

    def decrypt(self, ct):
        return self.ctx.decrypt(ct)

    def add(self, a, b):
        return a + b

    def multiply_plain(self, a, p):
        return a * p  # automatic mode: the product and its rescale

    def multiply(self, a, b):
        return a * b  # automatic mode: one fused multiply + relinearize + rescale

    def rotate(self, a):
        return a.rotate(1)

    def total_sum(self, a):
        return a.sum()

    def ciphertext_bytes(self, ct) -> int:
        return len(ct.serialize())

    # Key generation (worker.KEYGEN_OPS). A context makes its relinearization key once, so each
    # timed run gets a fresh context with a secret key and no relinearization key yet (untimed).
    def relin_keygen_setup(self):
        ctx = oboro.Context(log_n=self.params["log_n"], moduli_bits=self.params["moduli_bits"],
                            special_bits=self.params["special_bits"], scale_bits=self.params["scale_bits"],
                            dnum=self.params.get("dnum"))
        ctx.keygen(rotations=[], relin=False)
        return ctx

    def relin_keygen(self, ctx):
        ctx.keygen(rotations=[], relin=True)

    def relin_keygen_check(self, x, y):
        ctx = self.relin_keygen_setup()
        self.relin_keygen(ctx)
        return ctx.decrypt(ctx.encrypt(x) * ctx.encrypt(y))

    def rotation_keygen(self, step):
        self.ctx.keygen(rotations=[step])  # kept in the context, as keygen() does for a user

    def rotation_keygen_check(self, x, step):
        self.rotation_keygen(step)
        return self.ctx.decrypt(self.ctx.encrypt(x).rotate(step))



class CircuitAdapter:
    """The circuits mode (worker.run_circuits): polynomials through Ciphertext.polyval, the named
    functions of oboro.functions, inverse/sqrt with their Newton plans, and oboro.linalg.matvec."""

    def __init__(self, params: dict, threads: int):
        oboro.set_num_threads(threads)
        self.ctx = oboro.Context(log_n=params["log_n"], moduli_bits=params["moduli_bits"], special_bits=params["special_bits"],
                                 scale_bits=params["scale_bits"], dnum=params.get("dnum"))
        self.ctx.keygen(rotations=[], relin=True)
        self.pub = self.ctx.public()
        self.slots = self.ctx.slots
        self.version = oboro.__version__
        self.used = {"N": 2 ** params["log_n"], "logQ": list(params["moduli_bits"]), "logP": list(params["special_bits"]),
                     "dnum": self.ctx.dnum, "logQP": self.ctx.log_qp, "security": "128-bit (oboro's HE-standard check passed)"}
        self.notes = ["inputs encrypted with the public key, as in every library; each call returns a new ciphertext"]

    def decrypt(self, ct, n: int):
        return self.ctx.decrypt(ct)[:n]

    def consumed(self, ct_in, ct_out) -> int:
        return ct_in.level - ct_out.level

    def circuit(self, case: dict, x, matrix=None):
        """(input ciphertext, the timed call, what oboro chose); NotImplementedError(reason) to skip."""
        kind, lo_hi = case["kind"], tuple(case.get("interval") or (-1.0, 1.0))
        if kind == "matvec":
            return self._matvec(x, matrix)
        ct = self.pub.encrypt(x)
        if kind == "chebyshev":
            coeffs = case["coeffs"]
            plan = oboro._core.polynomial_plan(coeffs, "chebyshev", lo_hi, ct.level)
            return (ct, lambda: ct.polyval(coeffs, basis="chebyshev", interval=lo_hi),
                    f"polyval, degree {len(coeffs) - 1}: BSGS with {plan['baby_steps']} baby steps, {plan['products']} ct x ct products")
        if kind == "sigmoid":
            d = case["degree"]
            return (ct, lambda: oboro.functions.sigmoid(ct, interval=lo_hi, degree=d),
                    f"functions.sigmoid: its Chebyshev interpolant of degree {d}")
        if kind == "scale":
            c = case["constant"]
            return ct, (lambda: ct * c), f"ct * {c:g} (a product by the constant at scale q_level and its rescale)"
        if kind in ("inverse", "sqrt"):
            bits = case["bits"]
            p = oboro.functions.plan_inverse(lo_hi, bits, kind)
            how = f"Chebyshev degree {p['degree']} + {p['iterations']} Newton iteration(s) for {bits:g} bits"
            if kind == "inverse":
                return ct, (lambda: ct.inverse(lo_hi, bits)), f"ct.inverse: {how}"
            what = "x * inverse_sqrt(x)" if p["times_x"] else "the interpolant of sqrt"
            return ct, (lambda: ct.sqrt(lo_hi, bits)), f"ct.sqrt = {what}: {how}"
        raise NotImplementedError(f"unknown circuit kind '{kind}'")

    def _matvec(self, x, m):
        linalg = getattr(oboro, "linalg", None)
        if linalg is None or not hasattr(linalg, "matvec"):
            raise NotImplementedError("oboro.linalg.matvec is not in this build of oboro (the API is being written)")
        n = len(x)  # a power of two: the ciphertext's slot count; M is n x n
        linalg.keygen(self.ctx, m.shape, method="matvec", slots=n)
        pub = self.ctx.public()  # with the new Galois keys
        ct = pub.encrypt(x, slots=n)
        if hasattr(linalg, "PlainMatrix"):
            # encoded once per level, at the first (checked, untimed) call: the peers too encode their
            # diagonals before the clock starts
            w = linalg.PlainMatrix(self.ctx, m)
            how = f"linalg.matvec(PlainMatrix), {n}x{n}: {w.diagonal_count(n)} diagonals encoded once (first, untimed call)"
        else:
            w, how = m, f"linalg.matvec(NumPy matrix), {n}x{n}: diagonals encoded inside every call"
        return ct, (lambda: linalg.matvec(w, ct)), how + "; keys: linalg.keygen(method='matvec')"


def bootstrap_row(task: dict, log) -> dict:
    """One row of `oboro compare --bootstrap` (the keys of bench_bootstrap's rows): the keys and
    bootstrapper of keygen(bootstrap=True) with the task's options, the precision of values uniform in
    the complex unit disk (worst over a first, untimed bootstrap and the timed ones) and of all ones,
    the median time, and two real inputs in one bootstrap (bootstrap_real_pair)."""
    import time

    import numpy as np
    from precision import error_bits as _bits  # the worker's directory (worker.py runs it): one metric for every library

    oboro.set_num_threads(task["threads"])
    preset, options, runs = task["preset"], task["options"], task["repeat"]
    ctx = oboro.Context.from_preset(preset)
    log(f"{preset} {options or 'default'}: keys and the bootstrapper's matrices...")
    t0 = time.perf_counter()
    ctx.keygen(rotations=[], bootstrap=True, **{f"bootstrap_{k}": v for k, v in options.items()})
    setup_and_keygen_s = time.perf_counter() - t0
    info = ctx.bootstrap_info()
    n, level = info["slots"], info["min_input_level"]
    rng = np.random.default_rng(task["seed"])
    values = np.sqrt(rng.random(n)) * np.exp(2j * np.pi * rng.random(n))  # uniform over the disk's area
    ones = np.ones(n, dtype=np.complex128)
    ct = ctx.encrypt(values, level=level)
    constant_bits, _ = _bits(ctx.decrypt(ctx.encrypt(ones, level=level).bootstrap()), ones)
    out = ct.bootstrap()  # the first, untimed bootstrap: the diagonals are encoded here
    worst, mean = _bits(ctx.decrypt(out), values)
    times = []
    for r in range(runs):
        log(f"bootstrap {r + 1}/{runs}...")
        t0 = time.perf_counter()
        out = ct.bootstrap()
        times.append(time.perf_counter() - t0)
        w, m = _bits(ctx.decrypt(out), values)
        worst, mean = min(worst, w), min(mean, m)
    re, im = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    a, b = ctx.encrypt(re, level=level), ctx.encrypt(im, level=level)
    pair_times, pair_bits = [], 60.0
    for r in range(runs):
        log(f"two real inputs in one bootstrap {r + 1}/{runs}...")
        t0 = time.perf_counter()
        ra, rb = a.bootstrap_real_pair(b)
        pair_times.append(time.perf_counter() - t0)
        pair_bits = min(pair_bits, _bits(ctx.decrypt(ra), re)[0], _bits(ctx.decrypt(rb), im)[0])
    galois = info["galois_keys"]
    return {
        "preset": preset, "config": task["config"], "threads": task["threads"], "slots": n, "depth": info["depth"],
        "output_level": info["output_level"], "message_ratio_bits": info["message_ratio_bits"],
        "double_angles": info["double_angles"], "eval_mod_terms": info["eval_mod_terms"], "iterations": info["iterations"], "order": info["order"],
        "memory": info["memory"], "seeded_keys": info["seeded_keys"], "whole_galois_keys": info["whole_galois_keys"], "input_level": level, "cosine_degree": info["eval_mod_degree"],
        "encapsulates": info["encapsulates"], "setup_and_keygen_s": setup_and_keygen_s,
        # the Galois keys, the two encapsulation keys and the relinearization key (as Lattigo counts its set)
        "keys": galois + (2 if info["encapsulates"] else 0) + 1,
        "key_gib": (info["key_bytes"] + info["relin_key_bytes"]) / 2**30, "diagonal_gib": info["diagonal_bytes"] / 2**30,
        "bootstrap_median_s": float(np.median(times)), "bootstrap_min_s": min(times), "bootstrap_runs": times,
        "precision_bits": worst, "mean_precision_bits": mean, "constant_precision_bits": constant_bits,
        "model_bits": info["precision_bits"], "real_pair_median_s": float(np.median(pair_times)),
        "real_pair_precision_bits": pair_bits, "version": oboro.__version__,
    }
