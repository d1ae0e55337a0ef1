"""OpenFHE (PyPI `openfhe`, CKKS RNS) for `oboro compare`; the interface is in worker.py."""

from __future__ import annotations

import importlib.metadata

import os
import tempfile

import openfhe as fhe


def _file_size(write) -> int:
    """Size of what write(path) serializes (OpenFHE's Python API serializes to files)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "obj")
        if not write(path):
            raise RuntimeError("OpenFHE serialization failed")
        return os.path.getsize(path)


class Adapter:
    def __init__(self, params: dict, threads: int, rotations: bool):
        # Threads: OpenMP, from OMP_NUM_THREADS (set by the runner before this process started).
        n = 2 ** params["log_n"]
        q = params["moduli_bits"]
        if any(b != q[1] for b in q[1:]):
            raise ValueError("OpenFHE takes one size for all scaling primes; got " + str(q))
        self.slots = n // 2
        self.notes = []
        p = fhe.CCParamsCKKSRNS()
        p.SetMultiplicativeDepth(len(q) - 1)
        p.SetFirstModSize(q[0])
        p.SetScalingModSize(q[1] if len(q) > 1 else q[0])
        p.SetRingDim(n)
        p.SetBatchSize(self.slots)
        # FIXEDMANUAL: rescale only when asked, like the other libraries' explicit rescale.
        p.SetScalingTechnique(fhe.ScalingTechnique.FIXEDMANUAL)
        p.SetKeySwitchTechnique(fhe.KeySwitchTechnique.HYBRID)
        if params.get("dnum"):
            p.SetNumLargeDigits(params["dnum"])
        p.SetSecurityLevel(fhe.SecurityLevel.HEStd_128_classic)
        try:
            cc = fhe.GenCryptoContext(p)
            security = "HEStd_128_classic (OpenFHE's own check passed)"
        except Exception as e:  # OpenFHE adds its own special primes; the total may exceed the bound
            why = str(e).strip().rsplit("): ", 1)[-1][:200]
            p.SetSecurityLevel(fhe.SecurityLevel.HEStd_NotSet)
            cc = fhe.GenCryptoContext(p)
            security = "HEStd_NotSet"
            self.notes.append(f"OpenFHE's 128-bit check refused these parameters with its own special primes "
                              f"({why}), so it ran without the check")
        for feature in (fhe.PKESchemeFeature.PKE, fhe.PKESchemeFeature.KEYSWITCH, fhe.PKESchemeFeature.LEVELEDSHE,
                        fhe.PKESchemeFeature.ADVANCEDSHE):
            cc.Enable(feature)
        keys = cc.KeyGen()
        cc.EvalMultKeyGen(keys.secretKey)
        self.key_sizes = {
            "public": _file_size(lambda f: fhe.SerializeToFile(f, keys.publicKey, fhe.BINARY)),
            "relin": _file_size(lambda f: cc.SerializeEvalMultKey(f, fhe.BINARY)),
        }
        if rotations:
            cc.EvalRotateKeyGen(keys.secretKey, [1])
            self.key_sizes["rotation"] = _file_size(lambda f: cc.SerializeEvalAutomorphismKey(f, fhe.BINARY))
            cc.EvalSumKeyGen(keys.secretKey)
        self.cc, self.keys = cc, keys
        self.version = importlib.metadata.version("openfhe")
        self.used = {"N": cc.GetRingDimension(), "logQ": [q[0]] + [p.GetScalingModSize()] * (len(q) - 1),
                     "dnum": params.get("dnum"), "logP": "chosen by OpenFHE", "security": security}
        self.notes.append("multiply: EvalMult (relinearizes) + Rescale; total sum: EvalSum (library call)")

    def prepare_input(self, x):
        return x.tolist()  # OpenFHE takes Python lists; converted before the clock starts

    def encode(self, x):
        return self.cc.MakeCKKSPackedPlaintext(x)

    def decode(self, pt):
        pt.SetLength(self.slots)
        return pt.GetRealPackedValue()

    def encrypt(self, x):
        return self.cc.Encrypt(self.keys.publicKey, self.cc.MakeCKKSPackedPlaintext(x))

    def decrypt(self, ct):
        pt = self.cc.Decrypt(ct, self.keys.secretKey)
        pt.SetLength(self.slots)
        return pt.GetRealPackedValue()

    def add(self, a, b):
        return self.cc.EvalAdd(a, b)

    def multiply(self, a, b):
        return self.cc.Rescale(self.cc.EvalMult(a, b))

    def rotate(self, a):
        return self.cc.EvalRotate(a, 1)

    def total_sum(self, a):
        return self.cc.EvalSum(a, self.slots)

    def ciphertext_bytes(self, ct) -> int:
        return _file_size(lambda f: fhe.SerializeToFile(f, ct, fhe.BINARY))
