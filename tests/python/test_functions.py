"""Polynomials and functions of encrypted values against NumPy, with bounds in bits: polyval in
both bases at the edge degrees, the interval's ends, Ciphertext and Batch, both modes, the named
functions at their defaults, 1/x and square roots, integer powers, the plans, and the errors."""

import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev as C
from numpy.polynomial import polynomial as P

import oboro
import oboro.functions as F

# N = 2^12 without the security check (test speed), 10 levels of 40-bit primes.
DEEP = dict(log_n=12, moduli_bits=[60] + [40] * 10, special_bits=[61, 61], security=None)
# The fresh encryption's precision at N = 2^12 (docs/precision.md), as in the C++ tests.
FRESH_BITS = 40 - math.log2(9 * 4096 / 6) - 1.5


@pytest.fixture(scope="module")
def ctx():
    c = oboro.Context(**DEEP)
    c.keygen()
    return c


def bits(got, want):
    err = np.max(np.abs(np.asarray(got) - np.asarray(want)))
    return 60.0 if err == 0 else -math.log2(err)


def bound(coeffs):
    """The fresh precision less the amplification by the coefficients and (sqrt) the degree."""
    d = max(len(coeffs) - 1, 0)
    return FRESH_BITS - 0.5 * math.log2(d + 1) - math.log2(max(1.0, float(np.sum(np.abs(coeffs))))) - 1


def points(lo, hi, n=64, seed=0):
    x = np.random.default_rng(seed).uniform(lo, hi, n)
    x[0], x[1] = lo, hi  # the interval's ends
    return x


@pytest.mark.parametrize("degree", [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 63, 64, 127, 255])
def test_polyval_chebyshev(ctx, degree):
    rng = np.random.default_rng(degree)
    c = rng.uniform(-1, 1, degree + 1) / (1 + np.arange(degree + 1))
    x = points(-3, 5, seed=degree)
    ct = ctx.encrypt(x)
    y = ct.polyval(c, basis="chebyshev", interval=(-3, 5))
    want = C.chebval((2 * x - 2) / 8, c)
    expected_depth = 0 if degree == 0 else math.ceil(math.log2(degree + 1)) + 1
    assert y.level == ct.level - expected_depth
    assert bits(ctx.decrypt(y), want) >= bound(c)


@pytest.mark.parametrize("degree", [1, 2, 3, 5, 8, 16, 31])
def test_polyval_power(ctx, degree):
    rng = np.random.default_rng(100 + degree)
    c = rng.uniform(-1, 1, degree + 1) / (1 + np.arange(degree + 1))
    x = points(-1, 1, seed=degree)
    y = ctx.encrypt(x).polyval(c)
    assert y.level == ctx.max_level - math.ceil(math.log2(degree + 1))
    assert bits(ctx.decrypt(y), P.polyval(x, c)) >= bound(c)


def test_polyval_batch_and_manual_mode(ctx):
    c = np.array([0.1, -0.5, 0.0, 0.25, 0.0, -0.125])
    X = np.random.default_rng(3).uniform(-1, 1, (3, 16))
    b = ctx.encrypt_batch(X)
    yb = b.polyval(c, basis="chebyshev")
    got = ctx.decrypt(yb)
    assert got.shape == (3, 16)
    assert bits(got, C.chebval(X, c)) >= bound(c)
    # the batch's elements are the ciphertexts' words: same values as one at a time
    one = ctx.decrypt(ctx.encrypt(X[1]).polyval(c, basis="chebyshev"))
    assert bits(one, C.chebval(X[1], c)) >= bound(c)
    with ctx.manual():
        ct = ctx.encrypt(X[0])
        y = ct.polyval(c, basis="chebyshev", level=2, scale=2.0**38)
        assert y.level == 2 and y.scale == 2.0**38
        assert bits(ctx.decrypt(y), C.chebval(X[0], c)) >= bound(c)


@pytest.mark.parametrize("name", ["sigmoid", "exp", "log", "tanh", "gelu", "softplus", "sin", "cos"])
def test_named_functions_at_their_defaults(ctx, name):
    f, (lo, hi), degree = F._FUNCTIONS[name]
    x = points(lo, hi, 128, seed=7)
    y = getattr(F, name)(ctx.encrypt(x))
    want = np.array([f(t) for t in x])
    row = next(r for r in F.table() if r["name"] == name)
    assert ctx.max_level - y.level == row["depth"]
    # the interpolant's own error plus the noise amplified by the function's range
    scale = max(1.0, float(np.max(np.abs(want))))
    assert bits(ctx.decrypt(y), want) >= min(-math.log2(row["max_error"]) - 1, FRESH_BITS - 4 - math.log2(scale))


def test_chebyshev_of_any_callable(ctx):
    x = points(-2, 2, seed=5)
    y = F.chebyshev(ctx.encrypt(x), lambda t: math.atan(3 * t), (-2, 2), 63)
    assert bits(ctx.decrypt(y), np.arctan(3 * x)) >= 18


def test_inverse_and_square_roots(ctx):
    x = points(0.1, 10, seed=9)
    ct = ctx.encrypt(x)
    plan = F.plan_inverse((0.1, 10), bits=20)
    assert plan["iterations"] >= 1 and plan["final_error"] <= 2**-20
    y = F.inverse(ct, (0.1, 10), bits=20)
    assert ctx.max_level - y.level == plan["depth"]
    assert bits(ctx.decrypt(y) * x, np.ones_like(x)) >= 17  # relative precision
    z = points(0.5, 2, seed=10)
    cz = ctx.encrypt(z)
    assert bits(ctx.decrypt(F.sqrt(cz, (0.5, 2))), np.sqrt(z)) >= 20
    assert bits(ctx.decrypt(F.inverse_sqrt(cz, (0.5, 2))), 1 / np.sqrt(z)) >= 20
    with pytest.raises(ValueError, match="0 < lo < hi"):
        ct.inverse((-1, 1))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7, 8, 9, 16, 31])
def test_integer_powers_are_level_optimal(ctx, k):
    x = points(-1, 1, seed=k)
    ct = ctx.encrypt(x)
    y = ct**k
    assert y.level == ctx.max_level - math.ceil(math.log2(k))
    assert bits(ctx.decrypt(y), x**k) >= FRESH_BITS - 0.5 * math.log2(k) - 2
    assert bits(ctx.decrypt(ct.square()), x * x) >= FRESH_BITS - 2


def test_plans_without_work(ctx):
    p = F.plan(10, (-8, 8), 63, F._sigmoid)
    assert p["depth"] == 7
    full = F.plan(10, (-8, 8), 63)
    assert p["products"] <= full["products"]  # sigmoid - 1/2 is odd: fewer powers
    assert len(p["powers"]) < len(full["powers"])
    assert 0 < full["products"] <= 2 * math.sqrt(2 * 63) + 1
    # a chain of remainders' giant-step products shares one relinearization
    assert 0 < full["relinearizations"] < full["products"]


def test_errors_before_any_work(ctx):
    low = ctx.encrypt(points(-1, 1), level=3)
    c = F.coefficients(math.tanh, (-4, 4), 63)
    with pytest.raises(oboro.LevelMismatch, match=r"needs 7 levels \(6 for the degree and 1 for the map"):
        low.polyval(c, basis="chebyshev", interval=(-4, 4))
    with pytest.raises(oboro.LevelMismatch, match="needs"):
        low**9
    with pytest.raises(oboro.LevelMismatch):
        low.inverse((0.001, 1))
    with pytest.raises(ValueError, match="basis"):
        low.polyval([1, 2], basis="legendre")
    with pytest.raises(ValueError, match="real"):
        low.polyval([1, 2j])
    with pytest.raises(ValueError, match="not finite"):
        low.polyval([1.0, float("nan")])
    with pytest.raises(ValueError, match="interval"):
        low.polyval([1, 2, 3], basis="chebyshev", interval=(1, 1))
    with pytest.raises(ValueError, match="at least 1"):
        low**0
    with pytest.raises(ValueError):
        F.coefficients(math.log, (-1, 1), 4)  # not finite at a node
    keyless = oboro.Context(**DEEP)
    keyless.keygen(relin=False)
    with pytest.raises(oboro.MissingKey, match="relinearization"):
        keyless.encrypt(points(-1, 1)).polyval([0, 0, 1])


# ---- sign and comparisons (composite minimax polynomials) ----

# 15 levels: the default sign plan (12) plus the comparisons' one and the map of a bound != 1
SIGN_CTX = dict(DEEP, moduli_bits=[60] + [40] * 15)


@pytest.fixture(scope="module")
def sctx():
    c = oboro.Context(**SIGN_CTX)
    c.keygen()
    return c


def resolved_points(bound, gap, n=200, seed=0):
    x = np.random.default_rng(seed).uniform(gap, bound, n) * np.where(np.arange(n) % 2, 1, -1)
    x[:4] = [bound, -bound, gap, -gap]  # the ends of the resolved set
    return x


@pytest.mark.parametrize("bound,gap,target", [(1.0, 2**-8, 10), (4.0, 2**-5, 8), (1.0, 2**-6, 16)])
def test_sign_on_the_resolved_set(sctx, bound, gap, target):
    plan = F.plan_sign(bound, gap, target)
    assert plan["error"] <= 2**-target
    x = resolved_points(bound, gap)
    ct = sctx.encrypt(x)
    s = F.sign(ct, bound, gap, target)
    assert s.level == ct.level - plan["depth"]
    # the plan's error plus the noise, amplified by the composite's slope near the gap
    assert bits(sctx.decrypt(s), np.sign(x)) >= target - 1


def test_sign_in_the_gap_stays_between_zero_and_the_sign(sctx):
    x = np.array([0.0, 2**-10, -(2**-10), 2**-9, -(2**-9)])
    s = sctx.decrypt(F.sign(sctx.encrypt(x)))
    assert abs(s[0]) < 1e-3
    assert np.all(s[1:] * np.sign(x[1:]) > -1e-3) and np.all(np.abs(s) <= 1 + 1e-3)


def test_abs_max_min_greater(sctx):
    bound, gap, bits_ = 2.0, 2**-7, 10
    a = np.random.default_rng(1).uniform(-1, 1, 128)
    b = np.random.default_rng(2).uniform(-1, 1, 128)
    a[:2], b[:2] = [1, -1], [-1, 1]  # a - b at +-bound
    ca, cb = sctx.encrypt(a), sctx.encrypt(b)
    far = np.abs(a - b) >= gap
    err = 2**-bits_ * bound  # |a - b| <= bound: the sign's error times |a - b|
    assert np.max(np.abs(sctx.decrypt(F.maximum(ca, cb, bound, gap, bits_)) - np.maximum(a, b))[far]) <= err
    assert np.max(np.abs(sctx.decrypt(F.minimum(ca, cb, bound, gap, bits_)) - np.minimum(a, b))[far]) <= err
    g = sctx.decrypt(F.greater(ca, cb, bound, gap, bits_))
    assert np.max(np.abs(g - (a > b))[far]) <= 2**-bits_
    x = resolved_points(1.0, 2**-8)
    assert np.max(np.abs(sctx.decrypt(F.absolute(sctx.encrypt(x))) - np.abs(x))) <= 2**-10


def test_comparisons_on_a_batch_match_the_ciphertexts(sctx):
    A = np.random.default_rng(3).uniform(-0.5, 0.5, (3, 16))
    B = np.random.default_rng(4).uniform(-0.5, 0.5, (3, 16))
    got = sctx.decrypt(F.maximum(sctx.encrypt_batch(A), sctx.encrypt_batch(B)))
    for i in range(3):
        one = sctx.decrypt(F.maximum(sctx.encrypt(A[i]), sctx.encrypt(B[i])))
        assert bits(got[i], one) >= FRESH_BITS - 4
    assert bits(got, np.maximum(A, B)) >= 10 - 1


def test_sign_errors(sctx):
    with pytest.raises(oboro.LevelMismatch, match="levels"):
        F.sign(sctx.encrypt(np.ones(4), level=5))
    with pytest.raises(oboro.InvalidArgument):
        F.plan_sign(1.0, 2.0, 10)  # gap beyond the bound
    with pytest.raises(oboro.InvalidArgument):
        F.plan_sign(1.0, 2**-8, 0)
    with pytest.raises(oboro.InvalidArgument, match="real"):
        F.sign(sctx.encrypt(np.ones(4) * 1j))
    with pytest.raises(oboro.InvalidArgument, match="shapes"):
        F.maximum(sctx.encrypt(np.ones(4)), sctx.encrypt(np.ones(8)))


# ---- the same on the presets (HE-standard parameters, 2^40 scales on primes that are not 2^40) ----


@pytest.fixture(scope="module")
def presets():
    out = {}
    for name in ("S2", "S3"):
        c = oboro.Context.from_preset(name)
        c.keygen()
        out[name] = c
    return out


def preset_fresh_bits(c):
    return 40 - math.log2(9 * (2 * c.slots) / 6) - 1.5  # secret-key inputs are better than this


@pytest.mark.parametrize("name,f,ref,interval,degree", [
    ("sigmoid", F.sigmoid, lambda x: 1 / (1 + np.exp(-x)), (-8, 8), 63),
    ("tanh", F.tanh, np.tanh, (-4, 4), 63),
    ("exp", F.exp, np.exp, (-4, 4), 15),
    ("sin", F.sin, np.sin, (-math.pi, math.pi), 15),
])
def test_named_functions_on_s3(presets, name, f, ref, interval, degree):
    c = presets["S3"]
    x = points(*interval, n=256, seed=7)
    y = f(c.encrypt(x))
    assert y.level == c.max_level - (math.ceil(math.log2(degree + 1)) + 1)
    scale = max(1.0, float(np.max(np.abs(ref(x)))))
    assert bits(c.decrypt(y), ref(x)) >= preset_fresh_bits(c) - math.log2(scale) - 0.5 * math.log2(degree) - 3


def test_roots_on_s3(presets):
    c = presets["S3"]
    x = points(1, 16, n=256, seed=8)
    ct = c.encrypt(x)
    assert bits(c.decrypt(ct.inverse((1, 16))), 1 / x) >= 18
    assert bits(c.decrypt(ct.sqrt((1, 16))), np.sqrt(x)) >= 18
    assert bits(c.decrypt(ct.inverse_sqrt((1, 16))), 1 / np.sqrt(x)) >= 18


@pytest.mark.parametrize("degree", [1, 2, 3, 7])
def test_polyval_on_s2_down_to_level_zero(presets, degree):
    c = presets["S2"]  # 3 levels: degree 7 on [-1, 1] takes all of them
    coeffs = np.random.default_rng(degree).uniform(-1, 1, degree + 1) / (1 + np.arange(degree + 1))
    x = points(-1, 1, n=512, seed=degree)
    y = c.encrypt(x).polyval(coeffs, basis="chebyshev")
    assert y.level == c.max_level - math.ceil(math.log2(degree + 1))
    assert bits(c.decrypt(y), C.chebval(x, coeffs)) >= preset_fresh_bits(c) - 0.5 * math.log2(degree + 1) - 2
    assert (c.encrypt(x) ** 8).level == 0
