"""Microsoft SEAL through TenSEAL's low-level binding `tenseal.sealapi`; the interface is in worker.py.

SEAL runs every op on one thread (it has no threads inside an op). Its special prime is the last
prime of the coefficient modulus, one digit per ciphertext prime (dnum = #Q): it cannot take oboro's
dnum or several special primes, so with several special primes it runs with one of 60 bits (noted).
"""

from __future__ import annotations

import os
import tempfile

from tenseal import sealapi as seal


def _saved_size(obj) -> int:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "obj")
        obj.save(path)
        return os.path.getsize(path)


class Adapter:
    def __init__(self, params: dict, threads: int, rotations: bool):
        n = 2 ** params["log_n"]
        q, p = list(params["moduli_bits"]), list(params["special_bits"])
        self.notes = []
        if len(p) > 1:
            # SEAL has one special prime; keep log(QP) about the same with a single 60-bit one.
            self.notes.append(f"SEAL takes one special prime: {p} bits became [60] (dnum = #Q = {len(q)})")
            p = [60]
        parms = seal.EncryptionParameters(seal.SCHEME_TYPE.CKKS)
        parms.set_poly_modulus_degree(n)
        parms.set_coeff_modulus(seal.CoeffModulus.Create(n, q + p))
        sec = seal.SEC_LEVEL_TYPE.TC128 if n <= 32768 else seal.SEC_LEVEL_TYPE.NONE
        if n > 32768:
            self.notes.append(f"SEAL's security table stops at N=32768: sec_level NONE (log2(QP)={sum(q + p)})")
        ctx = seal.SEALContext(parms, True, sec)
        if not ctx.parameters_set():
            raise ValueError(f"SEAL refused the parameters: {ctx.parameter_error_message()}")
        self.scale = 2.0 ** params["scale_bits"]
        self.slots = n // 2
        keygen = seal.KeyGenerator(ctx)
        self.sk = keygen.secret_key()
        pk = seal.PublicKey()
        keygen.create_public_key(pk)
        rlk = seal.RelinKeys()
        keygen.create_relin_keys(rlk)
        # The keys of the left rotations by 1, 2, 4, ..., slots/2: rotate(1) and the manual total sum
        # use these only (SEAL's default set has both directions: twice the keys, the memory and the
        # key generation time; the others generate only what their sum needs too). sealapi's list
        # overload takes Galois elements, not steps. One key's size is measured on a set of one key:
        # saving the whole set would add a second copy of it to the peak memory (GBs at S4).
        gk = seal.GaloisKeys()
        self.key_sizes = {"public": _saved_size(pk), "relin": _saved_size(rlk)}
        if rotations:
            tool = ctx.key_context_data().galois_tool()
            one = seal.GaloisKeys()
            keygen.create_galois_keys([tool.get_elt_from_step(1)], one)
            self.key_sizes["rotation"] = _saved_size(one)
            del one
            keygen.create_galois_keys([tool.get_elt_from_step(1 << i) for i in range((n // 2).bit_length() - 1)], gk)
        self.ctx, self.pk, self.rlk, self.gk = ctx, pk, rlk, gk
        self.keygen, self.galois_tool = keygen, ctx.key_context_data().galois_tool()
        self.kept_keys = []
        self.encoder = seal.CKKSEncoder(ctx)
        self.encryptor = seal.Encryptor(ctx, pk)
        self.decryptor = seal.Decryptor(ctx, self.sk)
        self.ev = seal.Evaluator(ctx)
        self.version = "tenseal " + __import__("tenseal").__version__
        self.used = {"N": n, "logQ": q, "logP": p, "dnum": len(q), "logQP": sum(q + p),
                     "security": "tc128 (SEAL's own check passed)" if n <= 32768 else "none (see notes)"}
        self.notes.append("encode/encrypt take a Python list (sealapi has no NumPy path): the list is made "
                          "before the clock starts, its conversion inside the call is timed")
        self.notes.append("total sum: no library call; log2(slots) rotate_vector + add (powers of two)")
        self.notes.append("single-threaded: SEAL has no threads inside an op")

    def prepare_input(self, x):
        return x.tolist()

    def encode(self, x):
        pt = seal.Plaintext()
        self.encoder.encode(x, self.scale, pt)
        return pt

    def decode(self, pt):
        return self.encoder.decode_double(pt)

    def encrypt(self, x):
        ct = seal.Ciphertext(self.ctx)
        self.encryptor.encrypt(self.encode(x), ct)
        return ct

    def decrypt(self, ct):
        pt = seal.Plaintext()
        self.decryptor.decrypt(ct, pt)
        return self.encoder.decode_double(pt)

    def add(self, a, b):
        out = seal.Ciphertext(self.ctx)
        self.ev.add(a, b, out)
        return out

    def multiply_plain(self, a, p):
        out = seal.Ciphertext(self.ctx)
        self.ev.multiply_plain(a, p, out)
        self.ev.rescale_to_next_inplace(out)
        return out

    def multiply(self, a, b):
        out = seal.Ciphertext(self.ctx)
        self.ev.multiply(a, b, out)
        self.ev.relinearize_inplace(out, self.rlk)
        self.ev.rescale_to_next_inplace(out)
        return out

    def rotate(self, a):
        out = seal.Ciphertext(self.ctx)
        self.ev.rotate_vector(a, 1, self.gk, out)
        return out

    def total_sum(self, a):
        acc, step = a, 1
        while step < self.slots:
            rot, nxt = seal.Ciphertext(self.ctx), seal.Ciphertext(self.ctx)
            self.ev.rotate_vector(acc, step, self.gk, rot)
            self.ev.add(acc, rot, nxt)  # out of place: the operand a stays as it was
            acc, step = nxt, step * 2
        return acc

    def ciphertext_bytes(self, ct) -> int:
        return _saved_size(ct)

    # Key generation (worker.KEYGEN_OPS): each call returns a new key object; the rotation keys are
    # kept, as oboro and OpenFHE keep theirs in their contexts (a user keeps the keys made).
    def relin_keygen(self, _=None):
        rlk = seal.RelinKeys()
        self.keygen.create_relin_keys(rlk)
        return rlk

    def relin_keygen_check(self, x, y):
        rlk = self.relin_keygen()
        out = seal.Ciphertext(self.ctx)
        self.ev.multiply(self.encrypt(x), self.encrypt(y), out)
        self.ev.relinearize_inplace(out, rlk)
        self.ev.rescale_to_next_inplace(out)
        return self.decrypt(out)

    def rotation_keygen(self, step):
        gk = seal.GaloisKeys()
        self.keygen.create_galois_keys([self.galois_tool.get_elt_from_step(step)], gk)
        self.kept_keys.append(gk)
        return gk

    def rotation_keygen_check(self, x, step):
        gk = self.rotation_keygen(step)
        out = seal.Ciphertext(self.ctx)
        self.ev.rotate_vector(self.encrypt(x), step, gk, out)
        return self.decrypt(out)
