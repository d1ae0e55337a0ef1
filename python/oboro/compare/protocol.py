"""What the runner and the workers agree on (standard library only: the workers import it by path).

OPS: the per-op comparison, in table order, key -> label (what the timed call does in every library).
TOLERANCE: the largest max abs error accepted per op; a library whose result is further off is
reported as FAILED for that op and its time is not compared (a fast wrong answer is no answer).

CIRCUITS (the circuits mode, `--circuits`): each kind of circuit -> its label. A circuit case of the
task has a key "<kind>" or "<kind> <size>" (e.g. "chebyshev 255", "matvec 64"); tolerance(key) is
the tolerance of its kind. The inputs of every case come from uniform() below, which the Go program
(bench/peers/lattigo/circuits.go) computes bit for bit alike, so every library gets the same values.
"""

OPS = {
    "encode": "encode (full slot vector)",
    "encrypt": "encode + encrypt (public key)",
    "decrypt": "decrypt + decode",
    "add": "add (ct + ct)",
    "mul_plain": "multiply by a plaintext + rescale",
    "multiply": "multiply + relinearize + rescale",
    "rotate": "rotate by 1",
    "sum": "total sum (all slots)",
    "relin_keygen": "relinearization key generation",
    "rotation_keygen": "rotation key generation (one key)",
}

#: The key-generation ops: timed after the others and after the worker has read its peak memory,
#: since the keys they make (a new rotation step each call) would otherwise count in that peak.
KEYGEN_OPS = ("relin_keygen", "rotation_keygen")

CIRCUITS = {
    "chebyshev": "Chebyshev series on [-1, 1]",
    "sigmoid": "sigmoid on [-8, 8], degree 63",
    "inverse": "1/x on [1, 16]",
    "sqrt": "sqrt(x) on [1, 16]",
    "scale": "x times 0.3: one product by a constant and its rescale (the error a level adds)",
    "matvec": "plaintext matrix x encrypted vector",
}

#: values in [-1, 1] at scale 2^40; the total sum adds `slots` errors; the chain's result is
#: x^(2^depth) with x in [0.999, 1]. Circuits: CKKS at scale 2^40 gives about 20 bits (1e-6) after
#: a polynomial of degree 255; 2^-10 (about 1e-3) is a result that is still usable, anything worse is
#: wrong. The matrix-vector product adds n products of values in [-1, 1]: 1e-2 at n up to 2^15.
TOLERANCE = {"encode": 1e-4, "encrypt": 1e-4, "decrypt": 1e-4, "add": 1e-4, "mul_plain": 1e-4, "multiply": 1e-4, "rotate": 1e-4,
             "relin_keygen": 1e-4, "rotation_keygen": 1e-4,
             "sum": 1e-2, "chain": 1e-2,
             "chebyshev": 2.0**-10, "sigmoid": 2.0**-10, "inverse": 2.0**-10, "sqrt": 2.0**-10, "scale": 2.0**-10,
             "matvec": 1e-2}


def tolerance(key: str) -> float:
    """The tolerance of an op ("add") or of a circuit case ("chebyshev 255": that of "chebyshev")."""
    return TOLERANCE[key] if key in TOLERANCE else TOLERANCE[key.split()[0]]


_MASK = (1 << 64) - 1


def splitmix64(state: int) -> int:
    """One output of SplitMix64 for a 64-bit counter (the reference for the vectorized versions)."""
    z = (state + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def uniform_at(seed: int, i: int, lo: float, hi: float) -> float:
    """Value i of the stream `seed`: lo + (hi - lo) * u, u = the top 53 bits of splitmix64(seed * 2^32 + i)
    over 2^53. The worker's NumPy version and the Go program's give the same doubles."""
    u = (splitmix64(((seed << 32) + i) & _MASK) >> 11) * 2.0**-53
    return lo + (hi - lo) * u
