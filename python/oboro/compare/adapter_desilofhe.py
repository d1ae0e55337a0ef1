"""DESILO's `desilofhe` (CPU mode) for `oboro compare`; the interface is in worker.py.

desilofhe chooses its own ring dimension and modulus chain from the number of levels (only the
level count can match the others'), and its multiply already relinearizes and rescales.
"""

from __future__ import annotations

import importlib.metadata

import desilofhe


class Adapter:
    def __init__(self, params: dict, threads: int, rotations: bool):
        levels = len(params["moduli_bits"]) - 1
        e = desilofhe.Engine(max_level=levels, mode="cpu", thread_count=threads)
        self.e = e
        self.slots = e.slot_count
        self.sk = e.create_secret_key()
        self.pk = e.create_public_key(self.sk)
        self.rlk = e.create_relinearization_key(self.sk)
        self.key_sizes = {"public": len(e.serialize_public_key(self.pk)), "relin": len(e.serialize_relinearization_key(self.rlk))}
        self.rot1 = self.roll = None
        if rotations:
            self.rot1 = e.create_fixed_rotation_key(self.sk, 1)
            self.key_sizes["rotation"] = len(e.serialize_fixed_rotation_key(self.rot1))
            self.roll = e.create_roll_key(self.sk)
        self.version = importlib.metadata.version("desilofhe")
        self.used = {"N": 2 * e.slot_count, "levels": e.max_level, "logQ": "chosen by desilofhe (not configurable)",
                     "security": "desilofhe's own choice"}
        self.notes = []
        if 2 * e.slot_count != 2 ** params["log_n"]:
            self.notes.append(f"desilofhe chose N={2 * e.slot_count} for {levels} levels (the others: N={2 ** params['log_n']})")
        self.notes.append("multiply includes relinearize + rescale; rotate: FixedRotationKey(1); total sum: engine.sum with a RollKey")

    def prepare_input(self, x):
        return x  # NumPy arrays go in as they are

    def encode(self, x):
        return self.e.encode(x)

    def decode(self, pt):
        return self.e.decode(pt)

    def encrypt(self, x):
        return self.e.encrypt(x, self.pk)

    def decrypt(self, ct):
        return self.e.decrypt(ct, self.sk)

    def add(self, a, b):
        return self.e.add(a, b)

    def multiply(self, a, b):
        return self.e.multiply(a, b, self.rlk)

    def rotate(self, a):
        return self.e.rotate(a, self.rot1)

    def total_sum(self, a):
        return self.e.sum(a, self.roll)

    def ciphertext_bytes(self, ct) -> int:
        return len(self.e.serialize_ciphertext(ct))
