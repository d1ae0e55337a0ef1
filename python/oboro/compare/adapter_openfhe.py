"""OpenFHE (PyPI `openfhe`, CKKS RNS) for `oboro compare`; the interface is in worker.py."""

from __future__ import annotations

import importlib.metadata
import math
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


def _gen_context(p, notes: list[str]):
    """(crypto context, security text) at HEStd_128_classic, or, when OpenFHE's check refuses the
    parameters with the moduli it adds itself, without the check and a note saying so (the others
    run at the task's parameters, which pass oboro's 128-bit check)."""
    p.SetSecurityLevel(fhe.SecurityLevel.HEStd_128_classic)
    try:
        return fhe.GenCryptoContext(p), "HEStd_128_classic (OpenFHE's own check passed)"
    except Exception as e:
        why = str(e).strip().rsplit("): ", 1)[-1][:200]
        p.SetSecurityLevel(fhe.SecurityLevel.HEStd_NotSet)
        notes.append(f"OpenFHE's 128-bit check refused these parameters with the moduli it chose ({why}), "
                     f"so it ran without the check")
        return fhe.GenCryptoContext(p), "HEStd_NotSet"


def _context_and_keys(p, notes: list[str], *extra_features):
    """The crypto context of p (see _gen_context) with PKE, key switching, leveled SHE and the
    extra features enabled, its key pair and relinearization key, and their serialized sizes."""
    cc, security = _gen_context(p, notes)
    for feature in (fhe.PKESchemeFeature.PKE, fhe.PKESchemeFeature.KEYSWITCH, fhe.PKESchemeFeature.LEVELEDSHE, *extra_features):
        cc.Enable(feature)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    sizes = {
        "public": _file_size(lambda f: fhe.SerializeToFile(f, keys.publicKey, fhe.BINARY)),
        "relin": _file_size(lambda f: cc.SerializeEvalMultKey(f, fhe.BINARY)),
    }
    return cc, keys, security, sizes


def _ckks_params(params: dict, scaling):
    """CKKS RNS parameters of the task: its ring (all slots), depth and first/scaling prime sizes,
    HYBRID key switching with its dnum, and the given scaling technique."""
    q = params["moduli_bits"]
    p = fhe.CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(len(q) - 1)
    p.SetFirstModSize(q[0])
    p.SetScalingModSize(q[1] if len(q) > 1 else q[0])
    p.SetRingDim(2 ** params["log_n"])
    p.SetBatchSize(2 ** (params["log_n"] - 1))
    p.SetScalingTechnique(scaling)
    p.SetKeySwitchTechnique(fhe.KeySwitchTechnique.HYBRID)
    if params.get("dnum"):
        p.SetNumLargeDigits(params["dnum"])
    return p


class Adapter:
    def __init__(self, params: dict, threads: int, rotations: bool):
        # Threads: OpenMP, from OMP_NUM_THREADS (set by the runner before this process started).
        n = 2 ** params["log_n"]
        q = params["moduli_bits"]
        if any(b != q[1] for b in q[1:]):
            raise ValueError("OpenFHE takes one size for all scaling primes; got " + str(q))
        self.slots = n // 2
        self.notes = []
        # FIXEDMANUAL: rescale only when asked, like the other libraries' explicit rescale.
        p = _ckks_params(params, fhe.ScalingTechnique.FIXEDMANUAL)
        cc, keys, security, self.key_sizes = _context_and_keys(p, self.notes, fhe.PKESchemeFeature.ADVANCEDSHE)
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

    def multiply_plain(self, a, p):
        return self.cc.Rescale(self.cc.EvalMult(a, p))

    def multiply(self, a, b):
        return self.cc.Rescale(self.cc.EvalMult(a, b))

    def rotate(self, a):
        return self.cc.EvalRotate(a, 1)

    def total_sum(self, a):
        return self.cc.EvalSum(a, self.slots)

    # Key generation (worker.KEYGEN_OPS): OpenFHE keeps the keys in its context and skips a key it
    # has, so each timed run of the relinearization key first clears it (untimed).
    def relin_keygen_setup(self):
        fhe.ClearEvalMultKeys()

    def relin_keygen(self, _=None):
        self.cc.EvalMultKeyGen(self.keys.secretKey)

    def relin_keygen_check(self, x, y):
        self.relin_keygen_setup()
        self.relin_keygen()
        return self.decrypt(self.multiply(self.encrypt(x), self.encrypt(y)))

    def rotation_keygen(self, step):
        self.cc.EvalRotateKeyGen(self.keys.secretKey, [step])

    def rotation_keygen_check(self, x, step):
        self.rotation_keygen(step)
        return self.decrypt(self.cc.EvalRotate(self.encrypt(x), step))

    def ciphertext_bytes(self, ct) -> int:
        return _file_size(lambda f: fhe.SerializeToFile(f, ct, fhe.BINARY))


class IntegerAdapter:
    """BFV or BGV (scheme "bfv" / "bgv") for the chain mode only: encrypt, multiply (EvalMult, which
    relinearizes; BGV then ModReduce, the modulus switch, explicit as CKKS's rescale), decrypt.
    OpenFHE picks its own moduli for the depth; ring dimension and plaintext modulus are the task's."""

    def __init__(self, params: dict, threads: int, scheme: str):
        n, depth, t = 2 ** params["log_n"], len(params["moduli_bits"]) - 1, params["plain_modulus"]
        p = fhe.CCParamsBFVRNS() if scheme == "bfv" else fhe.CCParamsBGVRNS()
        p.SetPlaintextModulus(t)
        p.SetMultiplicativeDepth(depth)
        p.SetRingDim(n)
        p.SetKeySwitchTechnique(fhe.KeySwitchTechnique.HYBRID)
        if scheme == "bgv":
            p.SetScalingTechnique(fhe.ScalingTechnique.FIXEDMANUAL)
        self.notes = []
        cc, keys, security, self.key_sizes = _context_and_keys(p, self.notes)
        self.cc, self.keys, self.scheme, self.plain_modulus = cc, keys, scheme, t
        self.slots = cc.GetRingDimension()  # t = 1 mod 2N: one slot per coefficient
        self.version = importlib.metadata.version("openfhe")
        self.used = {"N": cc.GetRingDimension(), "t": t, "depth": depth,
                     "logQ": f"{math.log2(cc.GetModulus()):.0f} bits, chosen by OpenFHE", "security": security}
        self.notes += [f"{scheme.upper()}: OpenFHE chooses the moduli for the depth (HYBRID key switching)"
                      + ("; multiply: EvalMult + ModReduce (FIXEDMANUAL)" if scheme == "bgv" else "; multiply: EvalMult")]

    def prepare_input(self, x):
        return [int(v) for v in x]

    def encrypt(self, x):
        return self.cc.Encrypt(self.keys.publicKey, self.cc.MakePackedPlaintext(x))

    def decrypt(self, ct):
        pt = self.cc.Decrypt(ct, self.keys.secretKey)
        pt.SetLength(self.slots)
        return [v % self.plain_modulus for v in pt.GetPackedValue()]  # OpenFHE answers in (-t/2, t/2]

    def multiply(self, a, b):
        c = self.cc.EvalMult(a, b)
        return self.cc.ModReduce(c) if self.scheme == "bgv" else c


def bsgs_split(n: int) -> tuple[int, int]:
    """(n1, n2), n1 * n2 = n, n1 = the power of two nearest above sqrt(n): baby and giant steps."""
    n1 = 1 << ((n.bit_length() - 1 + 1) // 2)
    return n1, n // n1


class CircuitAdapter:
    """The circuits mode (worker.run_circuits). FLEXIBLEAUTO scaling (OpenFHE's own choice for its
    function evaluation; it rescales by itself), the task's ring, depth = the task's level count,
    the task's scaling primes, HYBRID key switching with the task's dnum."""

    def __init__(self, params: dict, threads: int):
        n = 2 ** params["log_n"]
        q = params["moduli_bits"]
        self.slots, self.notes = n // 2, []
        p = _ckks_params(params, fhe.ScalingTechnique.FLEXIBLEAUTO)
        self.cc, self.keys, security, _ = _context_and_keys(p, self.notes, fhe.PKESchemeFeature.ADVANCEDSHE)
        self.version = importlib.metadata.version("openfhe")
        self.used = {"N": self.cc.GetRingDimension(), "logQ": [q[0]] + [q[1]] * (len(q) - 1), "dnum": params.get("dnum"),
                     "logP": "chosen by OpenFHE", "scaling": "FLEXIBLEAUTO", "security": security}
        self.notes += ["FLEXIBLEAUTO scaling: OpenFHE's recommended mode for its polynomial and function evaluation "
                       "(rescales by itself, corrects the scale drift of the scaling primes)",
                       "EvalChebyshevSeries takes c0/2 as its constant term: the series' c0 is passed doubled"]

    def _encrypt(self, x, slots: int):
        return self.cc.Encrypt(self.keys.publicKey, self.cc.MakeCKKSPackedPlaintext(x, 1, 0, None, slots))

    def decrypt(self, ct, n: int):
        pt = self.cc.Decrypt(ct, self.keys.secretKey)
        pt.SetLength(n)
        return pt.GetRealPackedValue()

    def consumed(self, ct_in, ct_out) -> int:
        """Rescales done plus one pending (FLEXIBLEAUTO leaves the last product at scale degree 2)."""
        used = lambda c: c.GetLevel() + c.GetNoiseScaleDeg() - 1  # noqa: E731
        return used(ct_out) - used(ct_in)

    def circuit(self, case: dict, x, matrix=None):
        kind = case["kind"]
        if kind == "matvec":
            return self._matvec(x, matrix)
        ct = self._encrypt(x, self.slots)
        cc = self.cc
        if kind == "scale":
            c = case["constant"]
            # FLEXIBLEAUTO rescales before the next product: Rescale here makes the level taken explicit
            return ct, (lambda: cc.Rescale(cc.EvalMult(ct, c))), f"EvalMult(ct, {c:g}) + Rescale"
        lo, hi = case["interval"]
        d = case["degree"]
        if kind == "chebyshev":
            coeffs = [2.0 * case["coeffs"][0]] + list(case["coeffs"][1:])
            return (ct, lambda: cc.EvalChebyshevSeries(ct, coeffs, lo, hi),
                    f"EvalChebyshevSeries, degree {d} ({'Paterson-Stockmeyer' if d >= 5 else 'linear'})")
        if kind == "sigmoid":
            return ct, (lambda: cc.EvalLogistic(ct, lo, hi, d)), f"EvalLogistic, degree {d} (its own Chebyshev interpolant)"
        if kind == "inverse":
            return ct, (lambda: cc.EvalDivide(ct, lo, hi, d)), f"EvalDivide, degree {d} (Chebyshev interpolant of 1/x)"
        if kind == "sqrt":
            return (ct, lambda: cc.EvalChebyshevFunction(math.sqrt, ct, lo, hi, d),
                    f"EvalChebyshevFunction(sqrt), degree {d}")
        raise NotImplementedError(f"unknown circuit kind '{kind}'")

    def _matvec(self, x, m):
        """OpenFHE's Python API has no EvalLinearTransform: a baby-step giant-step diagonal product written
        with its public calls (hoisted EvalFastRotation baby steps, EvalMult by pre-encoded diagonals,
        EvalAdd, EvalRotate giant steps), on a sparse packing of n slots."""
        import numpy as np

        cc, n = self.cc, len(x)
        n1, n2 = bsgs_split(n)
        cc.EvalRotateKeyGen(self.keys.secretKey, list(range(1, n1)) + [j * n1 for j in range(1, n2)])
        rows = np.arange(n)
        # pre-encoded before the clock: diagonal k = M[i, i + k], turned right by the giant step j*n1
        pts = [[cc.MakeCKKSPackedPlaintext(np.roll(m[rows, (rows + j * n1 + i) % n], j * n1), 1, 0, None, n)
                for i in range(n1)] for j in range(n2)]
        ct = self._encrypt(x, n)
        order = cc.GetCyclotomicOrder()

        def call():
            digits = cc.EvalFastRotationPrecompute(ct)
            baby = [ct] + [cc.EvalFastRotation(ct, i, order, digits) for i in range(1, n1)]
            out = None
            for j in range(n2):
                inner = cc.EvalMult(baby[0], pts[j][0])
                for i in range(1, n1):
                    inner = cc.EvalAdd(inner, cc.EvalMult(baby[i], pts[j][i]))
                if j:
                    inner = cc.EvalRotate(inner, j * n1)
                out = inner if out is None else cc.EvalAdd(out, inner)
            return out

        return (ct, call, f"BSGS diagonal method written with OpenFHE's public API (no EvalLinearTransform in its Python "
                          f"API): {n1} hoisted baby steps x {n2} giant steps, {n} pre-encoded diagonals")
