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
