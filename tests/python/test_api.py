"""The Python API (oboro.Context, oboro.Ciphertext, errors) against NumPy, with explicit precision bounds.

Precision is measured in bits: -log2(max abs error) over all values. The bounds hold with several
bits of margin (S1/S2, values in [-1, 1]).
"""

from __future__ import annotations

import builtins
import copy
import math
import re

import numpy as np
import pytest

import oboro

# Precision bounds (bits = -log2(max abs error)).
FRESH_BITS = 26  # secret-key encryption, then decryption
PUBLIC_FRESH_BITS = 22  # public-key encryption
ADD_BITS = 24  # additions, integer multiplications, plaintext additions
MUL_BITS = 20  # one multiplication (ciphertext or plaintext) with its rescale
ROT_BITS = 22  # rotations (key switching)
DEEP_BITS = 18  # three multiplications in a row


def bits(got, want) -> float:
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return math.inf if err == 0 else -math.log2(err)


# ---- precision over key draws ---------------------------------------------------------------------
# The error of a result depends on the keys (the secret multiplies the rounding errors of public-key
# encryption, rescaling and key switching) and on the encryption's randomness, and its maximum over
# the slots has a heavy tail: a bound on one draw of keys is either loose or fails once in many runs.
# As in the C++ tests (tests/cpp/ckks_test_util.hpp), the precision tests of the operators measure
# KEY_DRAWS contexts keyed from fixed seeds (keygen(seed_for_testing=...): the same keys on every
# run, so that a failure can be replayed with its keys) and bound the lower median of the per-draw
# precisions: half the draws, not one, must fall below a bound to fail it.
KEY_DRAWS = 8


def key_draw_seed(draw: int) -> bytes:
    """The seed of key draw `draw`, as the C++ tests' key_draw_seed: "oboro test keys", then the draw."""
    return b"oboro test keys".ljust(31, b"\0") + bytes([draw])


def lower_median(values) -> float:
    v = sorted(values)
    return v[(len(v) - 1) // 2]


def public_key_fresh_bits_estimate(n: int) -> float:
    """Fresh public-key encryption of every slot at scale 2^40: 40 - log2(9N/6) (docs/precision.md)."""
    return 40 - math.log2(9 * n / 6)


def secret_key_fresh_bits_estimate(slots: int) -> float:
    """Fresh secret-key encryption of `slots` slots at scale 2^40 (docs/precision.md): decoding reads
    2*slots coefficients of the Gaussian error (sigma 3.19), so the largest slot error is about
    sigma * sqrt(2 * slots * ln(slots))."""
    return 40 - math.log2(3.19 * math.sqrt(2 * slots * math.log(slots)))


# ---- fixtures (module scope: key generation once) -------------------------------------------------


@pytest.fixture(scope="module")
def ctx1():
    """S1 (N = 2^13, 1 level), default rotation keys (+-powers of two) and conjugation."""
    return oboro.Context.from_preset("S1").keygen(conjugation=True)


@pytest.fixture(scope="module")
def ctx2():
    """S2 (N = 2^14, 3 levels), a few rotation keys, no conjugation key."""
    return oboro.Context.from_preset("S2").keygen(rotations=[1, -1, 4])


@pytest.fixture(scope="module")
def manual():
    """S1 in manual mode, rotation key for step 1 only."""
    return oboro.Context.from_preset("S1", auto=False).keygen(rotations=[1])


@pytest.fixture(scope="module")
def draws1():
    """KEY_DRAWS S1 contexts keyed from the fixed seeds, with ctx1's keys (default rotations, conjugation)."""
    return [
        oboro.Context.from_preset("S1").keygen(conjugation=True, seed_for_testing=key_draw_seed(d))
        for d in range(KEY_DRAWS)
    ]


@pytest.fixture
def rng():
    return np.random.default_rng(20240607)


def real(rng, *shape):
    return rng.uniform(-1.0, 1.0, shape)


def cplx(rng, *shape):
    return rng.uniform(-1.0, 1.0, shape) + 1j * rng.uniform(-1.0, 1.0, shape)


# ---- presets and contexts ----------------------------------------------------------------------------


def test_presets_and_preset_info():
    assert oboro.presets() == ["S1", "S2", "S3", "S4", "B1", "B2", "BT"]
    s1 = oboro.preset_info("S1")
    assert (s1["log_n"], s1["n"], s1["slots"], s1["levels"]) == (13, 8192, 4096, 1)
    assert s1["moduli_bits"] == [60, 40] and s1["special_bits"] == [60]
    assert s1["log_qp"] == 160 and s1["dnum"] == 2 and s1["scale_bits"] == 40
    assert s1["security"] == 128 and s1["max_log_qp"][128] == 218
    s4 = oboro.preset_info("S4")
    assert s4["levels"] == 20 and s4["dnum"] == 3 and s4["max_log_qp"] == {128: 1747, 192: None, 256: None}
    assert s4["digit_primes"] == [7, 7, 7]
    # B1's key-switching digits are balanced by bits: five 40-bit primes to a digit, four 61-bit ones
    assert oboro.preset_info("B1")["digit_primes"] == [5, 5, 5, 4, 4, 3]
    with pytest.raises(oboro.ParameterError, match="unknown preset"):
        oboro.preset_info("S9")


def test_context_properties(ctx1):
    assert ctx1.slots == 4096 and ctx1.n == 8192 and ctx1.log_n == 13
    assert ctx1.max_level == 1 and ctx1.log_qp == 160 and ctx1.security == 128 and ctx1.dnum == 2
    assert len(ctx1.moduli) == 2 and len(ctx1.special_moduli) == 1
    assert ctx1.preset == "S1" and ctx1.auto is True
    assert abs(math.log2(ctx1.scale) - 40) < 1e-3
    assert ctx1.has_secret_key and ctx1.has_public_key and ctx1.has_relin_key and ctx1.has_conjugation_key
    text = ctx1.describe()
    assert "N = 2^13" in text and "4096 slots" in text and "128-bit" in text and "automatic" in text
    assert repr(ctx1).startswith("<oboro.Context S1: N=2^13 slots=4096 levels=1")


def test_standard_scales(ctx2):
    # D_0 = 2^40 and D_{l-1} = D_l^2 / q_l exactly: products of standard ciphertexts are standard.
    assert ctx2.scale_at_level(0) == 2.0**40
    for level in range(1, ctx2.max_level + 1):
        d = ctx2.scale_at_level(level)
        assert ctx2.scale_at_level(level - 1) == d * d / ctx2.moduli[level]
        assert abs(math.log2(d) - 40) < 1e-3
    assert ctx2.scale == ctx2.scale_at_level(ctx2.max_level)
    with pytest.raises(oboro.LevelMismatch):
        ctx2.scale_at_level(4)


def test_explicit_parameters(rng):
    ctx = oboro.Context(log_n=13, moduli_bits=[50, 30], special_bits=[50], scale_bits=30, security=192)
    assert ctx.security == 192 and ctx.max_level == 1 and ctx.log_qp == 130 and ctx.preset is None
    assert ctx.scale_at_level(0) == 2.0**30
    ctx.keygen(rotations=[])
    x = real(rng, 100)
    ct = ctx.encrypt(x)
    assert bits(ctx.decrypt(ct), x) >= 18
    assert bits(ctx.decrypt(ct * ct), x * x) >= 12  # 30-bit scale: less precision, same API
    ctx3 = oboro.Context(13, [60, 40, 40], [60], dnum=3, auto=False)
    assert ctx3.dnum == 3 and ctx3.auto is False and ctx3.security == 128
    assert ctx3.digit_primes == [1, 1, 1]


def test_explicit_digit_primes(rng):
    # digits of 1, 2 and 1 primes (80 bits at most under 120 bits of special primes): products and
    # rotations at every level switch keys with them; a context keeps them through serialization
    ctx = oboro.Context(13, [60, 40, 40, 40], [60, 60], digit_primes=[1, 2, 1], security=None)
    assert ctx.digit_primes == [1, 2, 1] and ctx.dnum == 3
    assert oboro.Context(13, [60, 40, 40, 40], [60, 60], security=None).digit_primes == [2, 2]
    ctx.keygen(rotations=[3])
    x = real(rng, 128)  # a power of two: the rotation is cyclic over the 128 slots
    assert bits(ctx.decrypt((ctx.encrypt(x) * ctx.encrypt(x)).rotate(3)), np.roll(x * x, -3)) >= MUL_BITS
    assert oboro.Context.deserialize(ctx.serialize()).digit_primes == [1, 2, 1]
    with pytest.raises(oboro.ParameterError, match="covers 3 primes"):
        oboro.Context(13, [60, 40, 40, 40], [60, 60], digit_primes=[1, 2], security=None)
    with pytest.raises(oboro.ParameterError, match="digit_primes gives 3 digits"):
        oboro.Context(13, [60, 40, 40, 40], [60, 60], dnum=2, digit_primes=[1, 2, 1], security=None)


def test_explicit_primes(rng):
    s1 = oboro.Context.from_preset("S1")
    same = oboro.Context(log_n=13, moduli=s1.moduli, special_moduli=s1.special_moduli)
    assert same.moduli == s1.moduli and same.special_moduli == s1.special_moduli and same.log_qp == s1.log_qp
    # Primes the search does not pick (the next ones of each size) work the same, and a serialized
    # context keeps them.
    two_n = 2 * s1.n

    def next_prime_below(q, taken):
        c = q - two_n
        while c in taken or not _is_prime(c):
            c -= two_n
        return c

    taken = set(s1.moduli) | set(s1.special_moduli)
    q = [next_prime_below(x, taken) for x in s1.moduli]
    p = [next_prime_below(x, taken | set(q)) for x in s1.special_moduli]
    ctx = oboro.Context(log_n=13, moduli=q, special_moduli=p).keygen(rotations=[1])
    assert ctx.moduli == q and ctx.special_moduli == p
    x = real(rng, 64)
    assert bits(ctx.decrypt(ctx.encrypt(x) * ctx.encrypt(x)), x * x) >= MUL_BITS
    loaded = oboro.Context.deserialize(ctx.serialize())
    assert loaded.moduli == q and loaded.special_moduli == p
    # refused with a reason
    with pytest.raises(oboro.ParameterError, match="not 1 mod 2N"):
        oboro.Context(log_n=13, moduli=[q[0] + 2, q[1]], special_moduli=p)
    with pytest.raises(oboro.ParameterError, match="appears twice"):
        oboro.Context(log_n=13, moduli=[q[1], q[1]], special_moduli=p, moduli_bits=[40, 40])
    with pytest.raises(oboro.ParameterError, match="not of its size, 50 bits"):
        oboro.Context(log_n=13, moduli_bits=[50, 40], special_bits=[60], moduli=q, special_moduli=p)
    with pytest.raises(oboro.ParameterError, match="both moduli and special_moduli"):
        oboro.Context(log_n=13, moduli=q)
    with pytest.raises(oboro.ParameterError, match="give moduli_bits and special_bits"):
        oboro.Context(log_n=13, moduli_bits=[60, 40])


def _is_prime(n: int) -> bool:
    # Miller-Rabin with the bases that are exact below 3.3e24
    if n < 2:
        return False
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def test_insecure_parameters_raise():
    with pytest.raises(oboro.ParameterError, match="exceeds the 128-bit security limit of 218 bits") as e:
        oboro.Context(log_n=13, moduli_bits=[60, 60, 60, 60], special_bits=[60])
    assert isinstance(e.value, builtins.ValueError) and isinstance(e.value, oboro.Error)
    with pytest.raises(oboro.ParameterError, match="192-bit"):
        oboro.Context(log_n=13, moduli_bits=[60, 40], special_bits=[60], security=192)
    # Explicitly without a security check: allowed, and said loudly.
    ctx = oboro.Context(log_n=13, moduli_bits=[60, 60, 60, 60], special_bits=[60], security=None)
    assert ctx.security is None and "INSECURE" in ctx.describe()


def test_invalid_parameters_raise():
    with pytest.raises(oboro.ParameterError, match="unknown preset 'S9'"):
        oboro.Context.from_preset("S9")
    with pytest.raises(oboro.ParameterError, match="security = 100"):
        oboro.Context(13, [60, 40], [60], security=100)
    with pytest.raises(oboro.ParameterError, match="dnum"):
        oboro.Context(13, [60, 40], [60], dnum=0)
    with pytest.raises(oboro.ParameterError, match="special prime"):
        oboro.Context(13, [60, 40], [])
    with pytest.raises(oboro.ParameterError, match="scale_bits"):
        oboro.Context(13, [60, 40], [60], scale_bits=0)


# ---- keys ----------------------------------------------------------------------------------------------


def test_keygen_default_rotations(ctx1):
    expected = sorted(s * 2**k for k in range(12) for s in (1, -1))
    assert ctx1.rotations == expected


def test_keygen_adds_keys_and_keeps_the_secret_key(rng):
    ctx = oboro.Context.from_preset("S1")
    assert not ctx.has_secret_key and not ctx.has_public_key and ctx.rotations == []
    with pytest.raises(oboro.MissingKey, match="keygen"):
        ctx.encrypt([1.0])
    assert ctx.keygen(rotations=[3], relin=False) is ctx
    assert ctx.rotations == [3] and not ctx.has_relin_key and not ctx.has_conjugation_key
    x = real(rng, 8)
    ct = ctx.encrypt(x)
    with pytest.raises(oboro.MissingKey, match="relinearization key"):
        ct * ct
    ctx.keygen(rotations=[5], conjugation=True)
    assert ctx.rotations == [3, 5] and ctx.has_relin_key and ctx.has_conjugation_key
    # the ciphertext made before the second keygen still decrypts, and can now be squared
    assert bits(ctx.decrypt(ct), x) >= FRESH_BITS
    assert bits(ctx.decrypt(ct * ct), x * x) >= MUL_BITS
    assert bits(ctx.decrypt(ct.rotate(5)), np.roll(x, -5)) >= ROT_BITS


def test_keys_from_a_seed_are_reproducible(rng):
    seed = bytes(range(32))
    a = oboro.Context.from_preset("S1").keygen(rotations=[1, 3], conjugation=True, seed_for_testing=seed)
    b = oboro.Context.from_preset("S1").keygen(rotations=[1, 3], conjugation=True, seed_for_testing=seed)
    # every key, bit for bit (uncompressed: every word, not only the seeds of the uniform halves)
    assert a.serialize(secret_key=True, compress=False) == b.serialize(secret_key=True, compress=False)
    # later keygen() calls continue from the seed: the same calls add the same keys
    a.keygen(rotations=[5])
    b.keygen(rotations=[5])
    assert a.serialize(secret_key=True) == b.serialize(secret_key=True)
    # the keys work, and the two contexts decrypt each other's ciphertexts
    x = real(rng, 64)
    assert bits(b.decrypt((a.encrypt(x) * a.encrypt(x)).rotate(5)), np.roll(x * x, -5)) >= MUL_BITS
    # another seed, or none (the operating system's randomness), gives other keys
    for other_seed in (bytes(range(1, 33)), None):
        other = oboro.Context.from_preset("S1").keygen(rotations=[1, 3], conjugation=True, seed_for_testing=other_seed)
        assert other.serialize(secret_key=True) != b.serialize(secret_key=True)
        with pytest.raises(oboro.ContextMismatch, match="other keys"):
            other.decrypt(a.encrypt(x))


def test_seed_for_testing_errors():
    ctx = oboro.Context.from_preset("S1")
    with pytest.raises(oboro.InvalidArgument, match="32 bytes, not 31"):
        ctx.keygen(rotations=[], seed_for_testing=bytes(31))
    with pytest.raises(TypeError):
        ctx.keygen(rotations=[], seed_for_testing="not bytes")
    with pytest.raises(TypeError):
        ctx.keygen([], False, True, False, bytes(32))  # keyword only
    assert not ctx.has_secret_key  # nothing was made
    ctx.keygen(rotations=[])
    with pytest.raises(oboro.InvalidArgument, match="first keygen"):
        ctx.keygen(rotations=[1], seed_for_testing=bytes(32))
    # a context loaded with its secret key makes more keys for it, but not from a seed
    full = oboro.Context.deserialize(ctx.serialize(secret_key=True))
    full.keygen(rotations=[2])
    assert full.rotations == [2]
    x = np.arange(8) / 8
    assert bits(ctx.decrypt(full.encrypt(x).rotate(2)), np.roll(x, -2)) >= ROT_BITS
    with pytest.raises(oboro.InvalidArgument, match="first keygen"):
        full.keygen(rotations=[3], seed_for_testing=bytes(32))


# ---- encryption and decryption ----------------------------------------------------------------------------


def test_roundtrip_real(ctx1, rng):
    x = real(rng, 1000)
    ct = ctx1.encrypt(x)
    assert isinstance(ct, oboro.Ciphertext)
    assert ct.shape == (1000,) and ct.size == 1000 and ct.ndim == 1 and ct.slots == 1024
    assert ct.level == ctx1.max_level and ct.scale == ctx1.scale and ct.dtype == np.float64
    got = ctx1.decrypt(ct)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (1000,)
    assert bits(got, x) >= FRESH_BITS


def test_roundtrip_complex(ctx1, rng):
    z = cplx(rng, 64)
    ct = ctx1.encrypt(z)
    assert ct.dtype == np.complex128
    got = ctx1.decrypt(ct)
    assert got.dtype == np.complex128 and bits(got, z) >= FRESH_BITS


@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 3, 5), (4096,), (64, 64)])
def test_roundtrip_shapes(ctx1, rng, shape):
    x = rng.uniform(-1.0, 1.0, shape)
    ct = ctx1.encrypt(x)
    assert ct.shape == shape and ct.size == x.size
    got = ctx1.decrypt(ct)
    assert got.shape == shape and bits(got, x) >= FRESH_BITS


def test_roundtrip_lists_ints_and_scalars(ctx1):
    got = ctx1.decrypt(ctx1.encrypt([1, 2, -3]))
    assert got.dtype == np.float64 and bits(got, [1, 2, -3]) >= FRESH_BITS - 2
    got = ctx1.decrypt(ctx1.encrypt(np.array([True, False])))
    assert bits(got, [1, 0]) >= FRESH_BITS
    got = ctx1.decrypt(ctx1.encrypt(0.25))
    assert got.shape == () and bits(got, 0.25) >= FRESH_BITS
    got = ctx1.decrypt(ctx1.encrypt([1 + 2j]))
    assert got.dtype == np.complex128 and bits(got, [1 + 2j]) >= FRESH_BITS - 1


def test_encrypt_flattens_in_c_order(ctx1):
    x = np.arange(6.0).reshape(2, 3) / 8
    xf = np.asfortranarray(x)
    ct = ctx1.encrypt(xf)
    assert bits(ctx1.decrypt(ct), x) >= FRESH_BITS
    # slot i holds x.ravel()[i]: rotating the 8-slot vector by 1 shifts the C-order sequence
    flat = np.concatenate([x.ravel(), [0, 0]])
    assert bits(ctx1.decrypt(ct.reshape(6).rotate(1)), np.roll(flat, -1)[:6]) >= ROT_BITS


def test_encrypt_too_many_values(ctx1):
    with pytest.raises(oboro.InvalidArgument, match=r"4097 values \(shape \(4097,\)\) do not fit into the 4096 slots"):
        ctx1.encrypt(np.zeros(4097))
    with pytest.raises(ValueError, match=r"5000 values \(shape \(50, 100\)\)"):
        ctx1.encrypt(np.zeros((50, 100)))


def test_encrypt_invalid_input(ctx1):
    with pytest.raises(oboro.InvalidArgument, match="empty"):
        ctx1.encrypt([])
    with pytest.raises(TypeError, match="dtype"):
        ctx1.encrypt(["a", "b"])
    with pytest.raises(oboro.InvalidArgument, match="not finite"):
        ctx1.encrypt([1.0, np.nan])
    with pytest.raises(oboro.InvalidArgument, match="beyond the modulus"):
        ctx1.encrypt([1e30])


def test_encrypt_options(ctx1, ctx2, rng):
    x = real(rng, 10)
    ct = ctx2.encrypt(x, level=1)
    assert ct.level == 1 and ct.scale == ctx2.scale_at_level(1)
    assert bits(ctx2.decrypt(ct), x) >= FRESH_BITS
    ct = ctx1.encrypt(x, scale=2.0**30)
    assert ct.scale == 2.0**30 and bits(ctx1.decrypt(ct), x) >= 18
    ct = ctx1.encrypt(x, slots=4096)
    assert ct.slots == 4096 and bits(ctx1.decrypt(ct), x) >= FRESH_BITS
    with pytest.raises(oboro.LevelMismatch, match="level 2 is outside 0..1"):
        ctx1.encrypt(x, level=2)
    with pytest.raises(oboro.LevelMismatch):
        ctx1.encrypt(x, level=-1)
    with pytest.raises(oboro.InvalidArgument, match="slots = 12"):
        ctx1.encrypt(x, slots=12)
    with pytest.raises(oboro.InvalidArgument, match="slots = 8"):
        ctx1.encrypt(x, slots=8)


def test_secret_key_encryption_is_more_precise(draws1):
    """Over the key draws, against the estimates of docs/precision.md less one bit (measured medians:
    30.4 and 27.0 bits at S1, 4096 slots); every draw's secret-key encryption beats its public-key one."""
    sk_bits, pk_bits = [], []
    for draw, ctx in enumerate(draws1):
        x = real(np.random.default_rng(draw), 4096)
        sk_bits.append(bits(ctx.decrypt(ctx.encrypt(x)), x))
        pk_bits.append(bits(ctx.decrypt(ctx.public().encrypt(x)), x))
    assert lower_median(sk_bits) >= secret_key_fresh_bits_estimate(4096) - 1, sk_bits
    assert lower_median(pk_bits) >= public_key_fresh_bits_estimate(8192) - 1, pk_bits
    assert all(s > p for s, p in zip(sk_bits, pk_bits)), (sk_bits, pk_bits)


def test_public_context(ctx1, rng):
    pub = ctx1.public()
    assert not pub.has_secret_key and pub.has_public_key and pub.has_relin_key
    assert pub.rotations == ctx1.rotations and pub.slots == ctx1.slots
    x, y = real(rng, 16), real(rng, 16)
    a = pub.encrypt(x)
    b = ctx1.encrypt(y)
    r = (a * b + a).rotate(2)  # evaluated with the public copy's keys
    assert bits(ctx1.decrypt(r), np.roll(x * y + x, -2)) >= MUL_BITS
    with pytest.raises(oboro.MissingKey, match="no secret key"):
        pub.decrypt(a)
    with pytest.raises(oboro.MissingKey, match="no secret key"):
        pub.keygen()
    with pytest.raises(oboro.MissingKey, match="no keys yet"):
        oboro.Context.from_preset("S1").public()


def test_decrypt_with_other_context_raises(ctx1, ctx2, rng):
    x = real(rng, 4)
    with pytest.raises(oboro.ContextMismatch, match="another parameter set"):
        ctx2.decrypt(ctx1.encrypt(x))
    other = oboro.Context.from_preset("S1").keygen(rotations=[])
    with pytest.raises(oboro.ContextMismatch, match="other keys"):
        other.decrypt(ctx1.encrypt(x))
    with pytest.raises(oboro.ContextMismatch, match="different keys"):
        other.encrypt(x) + ctx1.encrypt(x)
    with pytest.raises(oboro.ContextMismatch):
        ctx2.encrypt(x) * ctx1.encrypt(x)


# ---- operators, automatic mode ------------------------------------------------------------------------------

# The bounds of the operator tests below: the lower median over the key draws of the precision of
# 3x5 arrays (16 slots) at S1, encrypted with the secret key.
# * A fresh encryption: about 35.1 bits (secret_key_fresh_bits_estimate(16): decoding 16 slots reads
#   32 coefficients of the error). Measured medians 34.9-35.3.
OP_FRESH_BITS = 33
# * Sums of two fresh errors (half a bit less), plaintext and constant additions, integer multiples
#   up to 5 (log2(5) = 2.3 bits less). Measured medians 32.4 (5 * ct) to 35.4.
OP_ADD_BITS = 31
# * One rescaled product: the rounding of c1 / q times s, read in 32 coefficients of variance N/18
#   each, about 40 - log2(sqrt(32 * N/18 * ln 16)) = 32.4 bits. Measured medians 32.1-34.4.
OP_MUL_BITS = 30

BINARY_CASES = [
    # (name, function, reference, bits)
    ("ct+ct", lambda a, b, y: a + b, lambda x, y: x + y, OP_ADD_BITS),
    ("ct-ct", lambda a, b, y: a - b, lambda x, y: x - y, OP_ADD_BITS),
    ("ct*ct", lambda a, b, y: a * b, lambda x, y: x * y, OP_MUL_BITS),
    ("ct*ct(square)", lambda a, b, y: a * a, lambda x, y: x * x, OP_MUL_BITS),
    ("ct+float", lambda a, b, y: a + 0.75, lambda x, y: x + 0.75, OP_ADD_BITS),
    ("float+ct", lambda a, b, y: 0.75 + a, lambda x, y: 0.75 + x, OP_ADD_BITS),
    ("ct-float", lambda a, b, y: a - 0.75, lambda x, y: x - 0.75, OP_ADD_BITS),
    ("float-ct", lambda a, b, y: 1.5 - a, lambda x, y: 1.5 - x, OP_ADD_BITS),
    ("ct+int", lambda a, b, y: a + 3, lambda x, y: x + 3, OP_ADD_BITS),
    ("int-ct", lambda a, b, y: 1 - a, lambda x, y: 1 - x, OP_ADD_BITS),
    ("ct*float", lambda a, b, y: a * 2.5, lambda x, y: x * 2.5, OP_MUL_BITS),
    ("float*ct", lambda a, b, y: -0.3 * a, lambda x, y: -0.3 * x, OP_MUL_BITS),
    ("ct*int", lambda a, b, y: a * 3, lambda x, y: x * 3, OP_ADD_BITS),
    ("int*ct", lambda a, b, y: -2 * a, lambda x, y: -2 * x, OP_ADD_BITS),
    ("ct*bool", lambda a, b, y: a * True, lambda x, y: x, OP_ADD_BITS),
    ("ct/float", lambda a, b, y: a / 4.0, lambda x, y: x / 4.0, OP_MUL_BITS),
    ("ct/int", lambda a, b, y: a / 3, lambda x, y: x / 3, OP_MUL_BITS),
    ("ct*complex", lambda a, b, y: a * (0.5 - 0.25j), lambda x, y: x * (0.5 - 0.25j), OP_MUL_BITS),
    ("complex*ct", lambda a, b, y: 1j * a, lambda x, y: 1j * x, OP_MUL_BITS),
    ("ct+complex", lambda a, b, y: a + (1 + 2j), lambda x, y: x + (1 + 2j), OP_ADD_BITS),
    ("ct*array", lambda a, b, y: a * y, lambda x, y: x * y, OP_MUL_BITS),
    ("array*ct", lambda a, b, y: y * a, lambda x, y: y * x, OP_MUL_BITS),
    ("ct+array", lambda a, b, y: a + y, lambda x, y: x + y, OP_ADD_BITS),
    ("array+ct", lambda a, b, y: y + a, lambda x, y: y + x, OP_ADD_BITS),
    ("ct-array", lambda a, b, y: a - y, lambda x, y: x - y, OP_ADD_BITS),
    ("array-ct", lambda a, b, y: y - a, lambda x, y: y - x, OP_ADD_BITS),
    ("ct/array", lambda a, b, y: a / (y + 2), lambda x, y: x / (y + 2), OP_MUL_BITS),
    ("ct*list", lambda a, b, y: a * list(y), lambda x, y: x * y, OP_MUL_BITS),
    ("neg", lambda a, b, y: -a, lambda x, y: -x, OP_FRESH_BITS),
    ("pos", lambda a, b, y: +a, lambda x, y: x, OP_FRESH_BITS),
    ("ct*np.float64", lambda a, b, y: a * np.float64(0.5), lambda x, y: x * 0.5, OP_MUL_BITS),
    ("np.float32*ct", lambda a, b, y: np.float32(0.5) * a, lambda x, y: x * 0.5, OP_MUL_BITS),
    ("np.int64*ct", lambda a, b, y: np.int64(5) * a, lambda x, y: 5 * x, OP_ADD_BITS),
    ("ct+np.complex128", lambda a, b, y: a + np.complex128(1j), lambda x, y: x + 1j, OP_ADD_BITS),
    ("ct*0d-array", lambda a, b, y: a * np.array(2.0), lambda x, y: x * 2.0, OP_MUL_BITS),
]


@pytest.mark.parametrize("name,fn,ref,min_bits", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
@pytest.mark.parametrize("dtype", ["real", "complex"])
def test_operators_against_numpy(draws1, name, fn, ref, min_bits, dtype):
    make = real if dtype == "real" else cplx
    results, operands = [], []
    for draw, ctx in enumerate(draws1):
        rng = np.random.default_rng(20240607 + draw)
        x, y = make(rng, 3, 5), make(rng, 3, 5)
        a, b = ctx.encrypt(x), ctx.encrypt(y)
        r = fn(a, b, y)
        want = ref(x, y)
        assert isinstance(r, oboro.Ciphertext) and r.shape == (3, 5)
        got = ctx.decrypt(r)
        expect_complex = dtype == "complex" or np.iscomplexobj(want)
        assert got.dtype == (np.complex128 if expect_complex else np.float64)
        results.append(bits(got, want))
        # operands are never modified
        operands.append(min(bits(ctx.decrypt(a), x), bits(ctx.decrypt(b), y)))
    assert lower_median(results) >= min_bits, (name, results)
    assert lower_median(operands) >= OP_FRESH_BITS - 0.5, (name, operands)  # the lower of two fresh errors


def test_levels_and_scales_after_operations(ctx2, rng):
    x, y = real(rng, 8), real(rng, 8)
    a, b = ctx2.encrypt(x), ctx2.encrypt(y)
    top = ctx2.max_level
    # ct * ct: relinearized and rescaled, at the standard scale of the level below (exactly)
    p = a * b
    assert p.level == top - 1 and p.poly_count == 2 and p.scale == ctx2.scale_at_level(top - 1)
    # ct * float / array: one level, standard scale (to rounding)
    for q in (a * 0.5, a * y, a * (1 + 1j)):
        assert q.level == top - 1 and q.scale == pytest.approx(ctx2.scale_at_level(top - 1), rel=2.0**-50)
    # ct * int and additions: no level
    for q in (a * 3, a + b, a + 1.0, a + y):
        assert q.level == top and q.scale == a.scale


def test_headline_example(ctx2):
    x = np.array([0.5, -1.25])
    ct = ctx2.encrypt(x)
    y = (ct * ct + 2.0 * ct).rotate(4)
    got = ctx2.decrypt(y)
    assert got.shape == (2,) and bits(got, np.roll(x * x + 2 * x, -4)) >= MUL_BITS


def test_depth_three_chain(ctx2, rng):
    x, y = real(rng, 256), real(rng, 256)
    a, b = ctx2.encrypt(x), ctx2.encrypt(y)
    r = ((a * b) * a) * b + a * 0.5 - 1
    assert r.level == 0 and r.scale == pytest.approx(ctx2.scale_at_level(0), rel=2.0**-40)
    assert bits(ctx2.decrypt(r), x * y * x * y + 0.5 * x - 1) >= DEEP_BITS
    with pytest.raises(oboro.LevelMismatch, match="no level is left"):
        r * r
    with pytest.raises(oboro.LevelMismatch, match="no level is left"):
        r * 2.5
    # an integer, or a float with an integer value, is an exact multiplication: no level needed
    for two in (2, 2.0, np.float64(2.0)):
        r2 = r * two
        assert r2.level == 0 and r2.scale == r.scale
        assert bits(ctx2.decrypt(r2), 2 * (x * y * x * y + 0.5 * x - 1)) >= DEEP_BITS - 1


def test_automatic_level_alignment(ctx2, rng):
    x, y, z = real(rng, 64), real(rng, 64), real(rng, 64)
    a, b, c = ctx2.encrypt(x), ctx2.encrypt(y), ctx2.encrypt(z)
    p = b * c  # level 2
    pp = p * c  # level 1
    for r, want, level in [
        (a + p, x + y * z, 2),
        (p + a, y * z + x, 2),
        (a - pp, x - y * z * z, 1),
        (pp * a, y * z * z * x, 0),
        (a * p, x * y * z, 1),
        (p - pp + a, y * z - y * z * z + x, 1),
    ]:
        assert r.level == level
        assert r.scale == pytest.approx(ctx2.scale_at_level(level), rel=2.0**-40)
        assert bits(ctx2.decrypt(r), want) >= MUL_BITS
    # the operands keep their levels
    assert (a.level, p.level, pp.level) == (3, 2, 1)


def test_automatic_scale_alignment_user_scales(ctx2, rng):
    x, y = real(rng, 32), real(rng, 32)
    a = ctx2.encrypt(x, scale=2.0**35)
    b = ctx2.encrypt(y)
    # same level, different scales: both are moved to the standard scale of the level below
    r = a + b
    assert r.level == ctx2.max_level - 1 and r.scale == pytest.approx(ctx2.scale_at_level(r.level), rel=2.0**-40)
    assert bits(ctx2.decrypt(r), x + y) >= ADD_BITS - 4
    # different levels: the higher one is brought to the lower one's level and scale
    q = b * b
    r = a - q
    assert r.level == q.level and r.scale == pytest.approx(q.scale, rel=2.0**-40)
    assert bits(ctx2.decrypt(r), x - y * y) >= MUL_BITS
    # multiplication of a non-standard ciphertext lands on the standard scale
    r = a * y
    assert r.scale == pytest.approx(ctx2.scale_at_level(r.level), rel=2.0**-40)
    assert bits(ctx2.decrypt(r), x * y) >= MUL_BITS - 4


def test_scale_mismatch_at_level_zero(ctx1, rng):
    x, y = real(rng, 8), real(rng, 8)
    a = ctx1.encrypt(x, level=0, scale=2.0**30)
    b = ctx1.encrypt(y, level=0)
    with pytest.raises(oboro.ScaleMismatch, match="no level is left"):
        a + b


def test_drop_to_level(ctx2, manual, rng):
    x = real(rng, 16)
    a = ctx2.encrypt(x)
    d = a.drop_to_level(1)
    assert d.level == 1 and d.scale == pytest.approx(ctx2.scale_at_level(1), rel=2.0**-40)
    assert bits(ctx2.decrypt(d), x) >= ADD_BITS
    assert a.drop_to_level(a.level).level == a.level
    with pytest.raises(oboro.LevelMismatch, match="only down"):
        d.drop_to_level(2)
    # manual mode keeps the scale
    m = manual.encrypt(x)
    md = m.drop_to_level(0)
    assert md.level == 0 and md.scale == m.scale and bits(manual.decrypt(md), x) >= FRESH_BITS


def test_rescale_and_relinearize_methods(ctx2, rng):
    x = real(rng, 16)
    a = ctx2.encrypt(x)
    r = a.rescale()
    assert r.level == a.level - 1 and r.scale == a.scale / ctx2.moduli[a.level]
    assert a.relinearize().poly_count == 2  # no-op on a size-2 ciphertext
    with pytest.raises(oboro.LevelMismatch, match="level 0"):
        a.drop_to_level(0).rescale()


# The bound of the rotation tests over the key draws: key switching at S1 (one 60-bit special prime)
# keeps about 25 bits over 4096 slots (measured medians 25.0); fewer slots keep more (30 bits over 16,
# composed rotations included).
DRAW_ROT_BITS = 23.5


def test_rotate(draws1):
    steps = [1, -1, 2, 3, 5, -7, 15, 16, 17, -16, 100]
    few, full_slots = {k: [] for k in steps}, {1: [], -2048: []}
    for draw, ctx in enumerate(draws1):
        rng = np.random.default_rng(draw)
        x = real(rng, 16)
        a = ctx.encrypt(x)
        # keyed steps, composed steps (3 = 4 - 1, 5 = 4 + 1), steps beyond the slot count
        for k in steps:
            few[k].append(bits(ctx.decrypt(a.rotate(k)), np.roll(x, -k)))
        full = real(rng, 4096)
        b = ctx.encrypt(full)
        for k in full_slots:
            full_slots[k].append(bits(ctx.decrypt(b.rotate(k)), np.roll(full, -k)))
    for k, per_draw in [*few.items(), *full_slots.items()]:
        assert lower_median(per_draw) >= DRAW_ROT_BITS, (k, per_draw)


def test_rotate_pads_with_the_slot_vector(ctx1):
    x = np.array([0.1, 0.2, 0.3])  # 4 slots: [x0, x1, x2, 0]
    got = ctx1.decrypt(ctx1.encrypt(x).rotate(1))
    assert bits(got, [0.2, 0.3, 0.0]) >= ROT_BITS


def test_rotate_missing_key(ctx2, manual, rng):
    a = ctx2.encrypt(real(rng, 16))  # keys: 1, -1, 4
    assert bits(ctx2.decrypt(a.rotate(3)), np.roll(ctx2.decrypt(a), -3)) >= ROT_BITS  # 3 = 4 - 1
    with pytest.raises(oboro.MissingKey, match=r"keygen\(rotations=\[2\]\)"):
        a.rotate(2)
    m = manual.encrypt(real(rng, 16))  # manual: only the exact step
    with pytest.raises(oboro.MissingKey, match="rotation by 2"):
        m.rotate(2)
    with pytest.raises(oboro.InvalidArgument, match="out of range"):
        m.rotate(16)


def test_conj(draws1, ctx2, rng):
    per_draw = []
    for draw, ctx in enumerate(draws1):
        z = cplx(np.random.default_rng(draw), 10)
        c = ctx.encrypt(z).conj()
        assert c.dtype == np.complex128
        per_draw.append(bits(ctx.decrypt(c), np.conj(z)))
    assert lower_median(per_draw) >= DRAW_ROT_BITS, per_draw
    with pytest.raises(oboro.MissingKey, match="conjugation"):
        ctx2.encrypt(cplx(rng, 10)).conj()


def test_in_place_operators(ctx2, rng):
    x, y = real(rng, 12), real(rng, 12)
    a, b = ctx2.encrypt(x), ctx2.encrypt(y)
    r = a.copy()
    ident = id(r)
    r += b
    r -= 0.5
    r *= 3
    r += y
    r *= b  # level 2
    r -= a  # a is brought down (a copy of it: a is not modified)
    r /= 2.0
    r /= np.full(12, 4.0)
    assert id(r) == ident and r.level == 0
    want = (((x + y - 0.5) * 3 + y) * y - x) / 2.0 / 4.0
    assert bits(ctx2.decrypt(r), want) >= MUL_BITS - 2
    assert a.level == ctx2.max_level and bits(ctx2.decrypt(a), x) >= FRESH_BITS
    assert b.level == ctx2.max_level
    s = a.copy()
    s *= s
    assert bits(ctx2.decrypt(s), x * x) >= MUL_BITS
    s = a.copy()
    s += s
    assert bits(ctx2.decrypt(s), 2 * x) >= ADD_BITS


def test_broadcasting_and_shapes(ctx1, rng):
    x = real(rng, 2, 3)
    a = ctx1.encrypt(x)
    row = np.array([1.0, -2.0, 0.5])
    assert bits(ctx1.decrypt(a * row), x * row) >= MUL_BITS
    assert bits(ctx1.decrypt(a + row[None, :]), x + row) >= ADD_BITS
    assert bits(ctx1.decrypt(a - np.array(0.25)), x - 0.25) >= ADD_BITS
    with pytest.raises(oboro.InvalidArgument, match=r"shape \(4,\) does not broadcast to the ciphertext's shape \(2, 3\)"):
        a * np.ones(4)
    with pytest.raises(oboro.InvalidArgument, match=r"different shapes \(2, 3\) and \(6,\)"):
        a + ctx1.encrypt(x.ravel())
    assert bits(ctx1.decrypt(a.reshape(6) + ctx1.encrypt(x.ravel())), 2 * x.ravel()) >= ADD_BITS
    assert a.reshape((3, -1)).shape == (3, 2) and a.reshape(6).shape == (6,)
    with pytest.raises(oboro.InvalidArgument, match="cannot reshape"):
        a.reshape(5)


def test_scalar_addition_leaves_padding_slots(ctx1):
    # size 3 in 4 slots: the constant goes to the 3 values only, so a rotate-and-sum stays exact
    x = np.array([0.5, 0.25, -0.5])
    a = ctx1.encrypt(x) + 1.0
    s = a + a.rotate(1)
    s = s + s.rotate(2)
    assert bits(ctx1.decrypt(s), np.full(3, (x + 1).sum())) >= ROT_BITS


def test_unsupported_operands(ctx1):
    a = ctx1.encrypt([1.0, 2.0])
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(TypeError):
        a * object()
    with pytest.raises(TypeError):
        a / a
    with pytest.raises(TypeError):
        1.0 / a
    with pytest.raises(ZeroDivisionError):
        a / 0
    with pytest.raises(TypeError):
        oboro.Ciphertext()


def test_ciphertext_properties_and_copies(ctx1, rng):
    x = real(rng, 5)
    a = ctx1.encrypt(x)
    assert (a.level, a.slots, a.shape, a.size, a.ndim, a.poly_count) == (1, 8, (5,), 5, 1, 2)
    assert a.auto is True and a.dtype == np.dtype("float64")
    assert repr(a) == "<oboro.Ciphertext shape=(5,) float64 level=1 scale=2^40.00 slots=8>"
    for c in (a.copy(), copy.copy(a), copy.deepcopy(a)):
        assert c is not a and c.level == a.level and c.scale == a.scale
        c += 1.0
        assert bits(ctx1.decrypt(a), x) >= FRESH_BITS and bits(ctx1.decrypt(c), x + 1) >= ADD_BITS


# ---- manual mode --------------------------------------------------------------------------------------------


def test_manual_mode(manual, rng):
    x, y = real(rng, 8), real(rng, 8)
    a, b = manual.encrypt(x), manual.encrypt(y)
    assert a.auto is False
    p = a * b  # size 3, not rescaled
    assert p.poly_count == 3 and p.level == 1 and p.scale == a.scale * b.scale
    assert bits(manual.decrypt(p), x * y) >= MUL_BITS  # size-3 ciphertexts decrypt too
    with pytest.raises(oboro.InvalidArgument, match="relinearize it first"):
        p.rotate(1)
    with pytest.raises(oboro.ScaleMismatch, match="the scales must match"):
        p + a
    r = p.relinearize()
    assert r.poly_count == 2 and r.level == 1
    r = r.rescale()
    assert r.level == 0 and r.scale == p.scale / manual.moduli[1]
    assert bits(manual.decrypt(r), x * y) >= MUL_BITS
    with pytest.raises(oboro.LevelMismatch, match="bring both to the same level"):
        a + r
    with pytest.raises(oboro.LevelMismatch):
        a * r
    with pytest.raises(oboro.ScaleMismatch):  # the same level, but D_1 != D_1^2 / q_1
        a.drop_to_level(0) + r
    # ct * float: the constant at scale q_level, no rescale; rescale() returns to the scale
    f = a * 0.5
    assert f.level == 1 and f.scale == a.scale * manual.moduli[1]
    f = f.rescale()
    assert f.scale == pytest.approx(a.scale, rel=2.0**-50) and bits(manual.decrypt(f), 0.5 * x) >= MUL_BITS
    g = a * y
    assert g.level == 1 and bits(manual.decrypt(g.rescale()), x * y) >= MUL_BITS
    assert bits(manual.decrypt((a * 1j).rescale()), 1j * x) >= MUL_BITS
    i = a * 3
    assert i.level == 1 and i.scale == a.scale and bits(manual.decrypt(i), 3 * x) >= ADD_BITS
    assert bits(manual.decrypt(a + b + 1.0 - y), x + y + 1 - y) >= ADD_BITS
    assert bits(manual.decrypt(a.rotate(1)), np.roll(x, -1)) >= ROT_BITS
    # in place, manual: one core operation each
    q = a.copy()
    q *= b
    assert q.poly_count == 3
    q = q.relinearize().rescale()
    assert bits(manual.decrypt(q), x * y) >= MUL_BITS


def test_switching_modes(rng):
    ctx = oboro.Context.from_preset("S1", auto=False).keygen(rotations=[])
    x = real(rng, 4)
    a = ctx.encrypt(x)
    assert (a * a).poly_count == 3 and a.auto is False
    with ctx.automatic():
        assert a.auto is True and ctx.auto is True
        p = a * a
        with ctx.manual():  # scopes nest: the innermost one decides
            assert (a * a).poly_count == 3
        assert (a * a).poly_count == 2
    assert p.poly_count == 2 and p.level == 0 and bits(ctx.decrypt(p), x * x) >= MUL_BITS
    assert a.auto is False and "manual" in ctx.describe() and repr(ctx).endswith("manual>")


def test_mode_scopes_are_per_thread_and_per_context(rng):
    import threading

    ctx = oboro.Context.from_preset("S1").keygen(rotations=[])
    other = oboro.Context.from_preset("S1").keygen(rotations=[])
    a, o = ctx.encrypt(real(rng, 4)), other.encrypt(real(rng, 4))
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def worker():
        inside.wait()
        seen["other thread"] = (a * a).poly_count  # not in the block: automatic
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    with ctx.manual():
        assert (a * a).poly_count == 3 and (o * o).poly_count == 2  # only ctx's values
        inside.set()
        done.wait(10)
    t.join()
    assert seen == {"other thread": 2}
    with pytest.raises(ZeroDivisionError):  # the block ends on an exception too
        with ctx.manual():
            a / 0
    assert a.auto is True


def test_setting_auto_still_works_and_warns(rng):
    ctx = oboro.Context.from_preset("S1").keygen(rotations=[])
    a = ctx.encrypt(real(rng, 4))
    with pytest.warns(DeprecationWarning, match="ctx.manual"):
        ctx.auto = False
    assert (a * a).poly_count == 3 and a.auto is False
    with pytest.warns(DeprecationWarning):
        ctx.auto = True
    assert (a * a).poly_count == 2


def test_manual_relinearize_without_key(rng):
    ctx = oboro.Context.from_preset("S1", auto=False).keygen(rotations=[], relin=False)
    a = ctx.encrypt(real(rng, 4))
    with pytest.raises(oboro.MissingKey, match="relinearization key"):
        (a * a).relinearize()


# ---- errors, threads, documentation ---------------------------------------------------------------------------


def test_error_hierarchy():
    for cls in (
        oboro.ParameterError,
        oboro.InvalidArgument,
        oboro.LevelMismatch,
        oboro.ScaleMismatch,
        oboro.ContextMismatch,
        oboro.MissingKey,
        oboro.SerializationError,
        oboro.ModulusOverflow,
    ):
        assert issubclass(cls, oboro.Error) and cls.__module__ == "oboro" and cls.__doc__
    assert issubclass(oboro.Error, Exception) and not issubclass(oboro.Error, builtins.ValueError)
    assert oboro.InvalidArgument is not builtins.ValueError and issubclass(oboro.InvalidArgument, builtins.ValueError)
    assert issubclass(oboro.ParameterError, builtins.ValueError)
    assert not issubclass(oboro.MissingKey, builtins.ValueError)
    assert issubclass(oboro.ModulusOverflow, builtins.OverflowError)


def test_star_import_shadows_no_builtin():
    namespace: dict = {}
    exec("from oboro import *", namespace)
    shadowed = sorted(set(namespace) & set(dir(builtins)) - {"__builtins__", "__doc__", "__name__"})
    assert shadowed == []
    assert not hasattr(oboro, "ValueError")


def test_threads():
    n = oboro.num_threads()
    try:
        oboro.set_num_threads(1)
        assert oboro.num_threads() == 1
    finally:
        oboro.set_num_threads(n)
    assert oboro.num_threads() == n


def test_memory_info_and_release(ctx1):
    """The core's buffer cache: what it reports adds up, it stays within the peak of buffers in use
    (plus its slack), and release_memory() empties it."""
    ctx = ctx1
    x = np.linspace(-1, 1, ctx.slots)
    cts = [ctx.encrypt(x) for _ in range(4)]
    before = oboro.memory_info()
    assert set(before) == {"cached_bytes", "in_use_bytes", "peak_in_use_bytes", "cache_hits", "fresh_blocks",
                           "cache_limit_bytes", "idle_seconds", "device_key_bytes"}
    assert all(isinstance(b, int) and b >= 0 for b in before["device_key_bytes"].values())
    assert before["in_use_bytes"] > 0 and before["peak_in_use_bytes"] >= before["in_use_bytes"]
    assert before["idle_seconds"] > 0
    del cts
    after = oboro.memory_info()
    assert after["in_use_bytes"] < before["in_use_bytes"]
    assert after["cached_bytes"] > before["cached_bytes"]  # the ciphertexts' blocks, kept for reuse
    assert after["cached_bytes"] + after["in_use_bytes"] <= after["peak_in_use_bytes"] + (256 << 20)
    hits = after["cache_hits"]
    ct = ctx.encrypt(x)
    assert oboro.memory_info()["cache_hits"] > hits  # served from the cache
    assert np.allclose(ctx.decrypt(ct)[: x.size].real, x, atol=1e-4)
    rotated = ct.rotate(1)  # a key switch: its scratch stays for the next one
    in_use = oboro.memory_info()["in_use_bytes"]
    oboro.release_memory()
    after_release = oboro.memory_info()
    assert after_release["cached_bytes"] == 0
    assert after_release["in_use_bytes"] < in_use  # the key-switching scratch went too
    assert np.allclose(ctx.decrypt(rotated)[: x.size].real, np.roll(x, -1), atol=1e-4)


def test_without_huge_page_advice():
    """OBORO_HUGE_PAGES=0 (read at the first large allocation, so in a process of its own): blocks of
    4 MiB and more are mapped without the advice and everything still computes (S3 ciphertexts and
    keys are such blocks)."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, oboro\n"
        "ctx = oboro.Context.from_preset('S3')\n"
        "ctx.keygen(rotations=[1])\n"
        "x = np.linspace(-1, 1, ctx.slots)\n"
        "ct = ctx.encrypt(x)\n"
        "assert oboro.memory_info()['fresh_blocks'] > 0\n"
        "got = ctx.decrypt((ct * ct).rotate(1)).real\n"
        "assert np.allclose(got, np.roll(x * x, -1), atol=1e-4), abs(got - np.roll(x * x, -1)).max()\n"
        "print('ok')\n"
    )
    env = {**os.environ, "OBORO_HUGE_PAGES": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_docstrings_and_signatures():
    import pydoc

    text = pydoc.render_doc(oboro.Ciphertext, renderer=pydoc.plaintext)
    for word in ("rotate", "drop_to_level", "relinearize", "ct * int is exact", "level", "scale", "shape"):
        assert word in text
    text = pydoc.render_doc(oboro.Context, renderer=pydoc.plaintext)
    for word in ("from_preset", "keygen", "encrypt", "decrypt", "public", "automatic mode", "manual mode"):
        assert word in text
    assert "def encrypt" not in oboro.Context.encrypt.__doc__
    assert oboro.Context.encrypt.__doc__.startswith("encrypt(self, values: numpy.typing.ArrayLike")
    assert "secret key" in oboro.Context.encrypt.__doc__
    assert "+-1, +-2, +-4" in oboro.Context.keygen.__doc__


def test_type_stub_is_current():
    import pathlib

    pytest.importorskip("nanobind.stubgen")
    from oboro import _make_stub

    stub = pathlib.Path(oboro.__file__).with_name("_core.pyi")
    assert stub.with_name("py.typed").exists()
    # The same definitions and signatures (formatting may differ between nanobind versions).
    pattern = re.compile(r"^\s*((?:def|class) \w+.*?)(?::\s*$|:\s*\.\.\.$|$)", re.M)
    assert pattern.findall(stub.read_text()) == pattern.findall(_make_stub.generate()), (
        "the stub is out of date; regenerate it with: python -m oboro._make_stub"
    )


def test_cli_params(capsys):
    from oboro import cli

    assert cli.main(["params"]) == 0
    out = capsys.readouterr().out
    for name in ("S1", "S2", "S3", "S4"):
        assert name in out
    assert "4096" in out and "1220" in out and "<= 1747" in out
    assert cli.main(["params", "S2", "-v"]) == 0
    out = capsys.readouterr().out
    assert "S2" in out and "S1" not in out and "[60, 40, 40, 40]" in out
    assert cli.main(["params", "S9"]) == 2
    assert "unknown preset" in capsys.readouterr().err
    assert cli.main(["params", "--json", "S1"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)[0]["slots"] == 4096


def test_noise_flooding(rng):
    ctx = oboro.Context.from_preset("S1").keygen(rotations=[])
    x = real(rng, 64)
    ct = ctx.encrypt(x)
    assert ctx.noise_flooding == 0
    assert bits(ctx.decrypt(ct), x) >= FRESH_BITS
    # 2^20 per coefficient: a slot error of about 2^(20 + 6.5 - 40) = 2^-13.5 at N = 2^13
    ctx.noise_flooding = 20
    assert ctx.noise_flooding == 20
    assert 9 <= bits(ctx.decrypt(ct), x) <= 17
    # a batch is decrypted in parallel, with fresh noise for every element
    both = ctx.decrypt(ctx.encrypt_batch(np.stack([x, x])))
    assert all(9 <= bits(row, x) <= 17 for row in both)
    assert not np.array_equal(both[0], both[1])
    ctx.noise_flooding = 0
    assert bits(ctx.decrypt(ct), x) >= FRESH_BITS
    with pytest.raises(oboro.InvalidArgument, match="0..50"):
        ctx.noise_flooding = 60
    with pytest.raises(oboro.MissingKey, match="no secret key"):
        ctx.public().noise_flooding = 30


def test_no_sentinels_an_explicit_zero_scale_is_an_error():
    """'Not given' is None: scale=0.0 is refused instead of meaning the default scale."""
    c = oboro.Context.from_preset("S1")
    c.keygen()
    with pytest.raises(oboro.InvalidArgument, match="scale 0 must be finite and >= 1"):
        c.encrypt([1.0], scale=0.0)
    with pytest.raises(oboro.InvalidArgument, match="scale 0"):
        c.encode([1.0], scale=0.0)
    with pytest.raises(oboro.InvalidArgument, match="slots = 0"):
        c.encrypt([1.0], slots=0)
    with pytest.raises(oboro.LevelMismatch, match="level -1"):
        c.encrypt([1.0], level=-1)
    assert c.encrypt([1.0], scale=None).scale == c.encrypt([1.0]).scale
