"""DESILO's `desilofhe` (CPU mode) for `oboro compare`; the interface is in worker.py.

desilofhe chooses its own ring dimension and modulus chain from the number of levels (only the
level count can match the others'), and its multiply already relinearizes and rescales.
"""

from __future__ import annotations

import importlib.metadata

import desilofhe
import numpy as np


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
        self.kept_keys = []
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
        self.notes.append("multiply includes relinearize + rescale, multiply by a plaintext the rescale; rotate: FixedRotationKey(1); total sum: engine.sum with a RollKey")

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

    def multiply_plain(self, a, p):
        return self.e.multiply(a, p)  # rescales at once, as its ciphertext product does

    def multiply(self, a, b):
        return self.e.multiply(a, b, self.rlk)

    def rotate(self, a):
        return self.e.rotate(a, self.rot1)

    def total_sum(self, a):
        return self.e.sum(a, self.roll)

    def ciphertext_bytes(self, ct) -> int:
        return len(self.e.serialize_ciphertext(ct))

    # Key generation (worker.KEYGEN_OPS): each call returns a new key object; the rotation keys are
    # kept, as oboro and OpenFHE keep theirs in their contexts (a user keeps the keys made).
    def relin_keygen(self, _=None):
        return self.e.create_relinearization_key(self.sk)

    def relin_keygen_check(self, x, y):
        return self.decrypt(self.e.multiply(self.encrypt(x), self.encrypt(y), self.relin_keygen()))

    def rotation_keygen(self, step):
        key = self.e.create_fixed_rotation_key(self.sk, step)
        self.kept_keys.append(key)
        return key

    def rotation_keygen_check(self, x, step):
        return self.decrypt(self.e.rotate(self.encrypt(x), self.rotation_keygen(step)))


def engine_for(log_n: int, levels: int, threads: int):
    """(engine, its max_level): desilofhe picks its ring from max_level alone, so take the smallest
    max_level >= levels whose ring is N = 2^log_n, and encrypt at `levels` (the same ciphertexts and
    work as the others; only its keys span the longer chain). ValueError when no max_level gives N."""
    for top in range(levels, 61):
        e = desilofhe.Engine(max_level=top, mode="cpu", thread_count=threads)
        if 2 * e.slot_count == 2**log_n:
            return e, top
        if 2 * e.slot_count > 2**log_n:
            break
    raise ValueError(f"desilofhe has no max_level >= {levels} on N = 2^{log_n}")


class CircuitAdapter:
    """The circuits mode (worker.run_circuits): desilofhe's evaluate_chebyshev_polynomial on the series
    and on the runner's Chebyshev interpolants (sigmoid, sqrt); no inverse; the matrix-vector product
    as a baby-step giant-step diagonal product written with its public calls."""

    def __init__(self, params: dict, threads: int):
        levels = len(params["moduli_bits"]) - 1
        self.e, top = engine_for(params["log_n"], levels, threads)
        e = self.e
        self.level = levels
        self.slots = e.slot_count
        self.sk = e.create_secret_key()
        self.pk = e.create_public_key(self.sk)
        self.rlk = e.create_relinearization_key(self.sk)
        self.version = importlib.metadata.version("desilofhe")
        self.used = {"N": 2 * e.slot_count, "levels": levels, "engine max_level": top,
                     "logQ": "chosen by desilofhe (not configurable)", "security": "desilofhe's own choice"}
        self.notes = [f"desilofhe picks its ring from max_level only: max_level={top} gives N = {2 * e.slot_count}"
                      + (f"; inputs are encrypted at level {levels} like the others' (its keys span the longer chain)"
                         if top > levels else ""),
                      "each multiply rescales at once (no lazy rescaling in its API)"]

    def _encrypt(self, x):
        if len(x) < self.slots:  # sparse packing = the vector repeated over all slots
            x = np.tile(x, self.slots // len(x))
        return self.e.encrypt(x, self.pk, self.level)

    def decrypt(self, ct, n: int):
        return self.e.decrypt(ct, self.sk)[:n]

    def consumed(self, ct_in, ct_out) -> int:
        return ct_in.level - ct_out.level

    def circuit(self, case: dict, x, matrix=None):
        kind, e, rlk = case["kind"], self.e, self.rlk
        if kind == "matvec":
            return self._matvec(x, matrix)
        if kind == "inverse":
            raise NotImplementedError("desilofhe 2.0 has no inverse or division (its Engine has no such call)")
        ct = self._encrypt(x)
        if kind == "scale":
            c = case["constant"]
            return ct, (lambda: e.multiply(ct, c)), f"multiply(ct, {c:g})"
        coeffs = list(case["coeffs"])
        d = len(coeffs) - 1
        lo, hi = case["interval"]
        if (lo, hi) == (-1.0, 1.0):
            return ct, (lambda: e.evaluate_chebyshev_polynomial(ct, coeffs, rlk)), f"evaluate_chebyshev_polynomial, degree {d}"
        a, b = 2.0 / (hi - lo), -(hi + lo) / (hi - lo)

        def call():  # the interval onto [-1, 1] (one level), then the same interpolant as the others
            return e.evaluate_chebyshev_polynomial(e.add(e.multiply(ct, a), b), coeffs, rlk)

        return ct, call, f"map onto [-1, 1] + evaluate_chebyshev_polynomial of the Chebyshev interpolant, degree {d}"

    def _matvec(self, x, m):
        e, n = self.e, len(x)
        n1 = 1 << ((n.bit_length() - 1 + 1) // 2)
        n2 = n // n1
        baby_keys = [e.create_fixed_rotation_key(self.sk, i) for i in range(1, n1)]
        giant_keys = {j: e.create_fixed_rotation_key(self.sk, j * n1) for j in range(1, n2)}
        rows, reps = np.arange(n), self.slots // n
        pts = [[e.encode(np.tile(np.roll(m[rows, (rows + j * n1 + i) % n], j * n1), reps), self.level)
                for i in range(n1)] for j in range(n2)]
        ct = self._encrypt(x)

        def call():
            baby = [ct] + (e.rotate_many(ct, baby_keys) if baby_keys else [])
            out = None
            for j in range(n2):
                inner = e.multiply(baby[0], pts[j][0])
                for i in range(1, n1):
                    inner = e.add(inner, e.multiply(baby[i], pts[j][i]))
                if j:
                    inner = e.rotate(inner, giant_keys[j])
                out = inner if out is None else e.add(out, inner)
            return out

        return (ct, call, f"BSGS diagonal method written with desilofhe's public API (its matrix_multiply multiplies "
                          f"matrices in its matrix packing, Engine(shape=...), not a matrix by a vector): rotate_many for {n1} baby steps x {n2} giant steps, "
                          f"{n} pre-encoded diagonals, the vector repeated over all slots")
