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
        self.ctx, self.pub = ctx, ctx.public()
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

    def multiply(self, a, b):
        return a * b  # automatic mode: one fused multiply + relinearize + rescale

    def rotate(self, a):
        return a.rotate(1)

    def total_sum(self, a):
        return a.sum()

    def ciphertext_bytes(self, ct) -> int:
        return len(ct.serialize())



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
