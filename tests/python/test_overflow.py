"""Values too large for the modulus (docs/precision.md, "Values too large for the modulus"): encoding
refuses values whose coefficients reach Q_level / 2^6, and decryption refuses a result with a
coefficient beyond Q_level / 2^5 (oboro.ModulusOverflow), which is how a result that has wrapped
around the modulus shows. Both sides of both bounds are tested: a legitimate large value just inside
still decrypts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import oboro

ENCODING_HEADROOM_BITS = 6
OVERFLOW_HEADROOM_BITS = 5


@pytest.fixture(scope="module")
def ctx1():
    return oboro.Context.from_preset("S1").keygen()


def test_the_wrapped_square_of_1e6_is_refused(ctx1):
    # The case: at S1, 1e6 ** 2 lands at level 0, where 1e12 * 2^40 is far beyond q_0 ~ 2^60;
    # decrypted silently it would be 1e12 mod 2^20 = 331776.01.
    x = ctx1.encrypt([1e6])
    with pytest.raises(oboro.ModulusOverflow, match="wrapped around the modulus") as info:
        ctx1.decrypt(x**2)
    assert "level 0" in str(info.value) and "Scale the inputs down" in str(info.value)
    with pytest.raises(OverflowError):  # the builtin catches it too
        ctx1.decrypt(x * x)
    # One level higher the same square fits: it decrypts.
    ctx2 = oboro.Context.from_preset("S2").keygen()
    y = ctx2.encrypt([1e6])
    assert abs(ctx2.decrypt(y**2)[0] / 1e12 - 1) < 1e-9


def test_random_data_that_wraps_is_always_refused(ctx1):
    rng = np.random.default_rng(5)
    x = ctx1.encrypt(rng.uniform(-4096, 4096, ctx1.slots))  # squares up to 2^24: 2^64 against q_0 ~ 2^60
    with pytest.raises(oboro.ModulusOverflow):
        ctx1.decrypt(x * x)


def test_batches_are_checked_too(ctx1):
    rows = np.array([[0.5, 0.25], [1e6, 1.0]])
    b = ctx1.encrypt_batch(rows)
    with pytest.raises(oboro.ModulusOverflow):
        ctx1.decrypt(b * b)
    ok = ctx1.encrypt_batch(rows[:1])
    assert np.allclose(ctx1.decrypt(ok * ok), rows[:1] ** 2, atol=1e-5)


def test_decryption_bound_both_sides(ctx1):
    # A constant vector is the constant coefficient alone (value * scale): the bound is exact for it.
    one = ctx1.encrypt(np.ones(ctx1.slots))
    sq = one * one
    assert sq.level == 0
    log2_q0 = math.log2(ctx1.moduli[0])
    bound = 2.0 ** (log2_q0 - OVERFLOW_HEADROOM_BITS) / sq.scale
    inside = math.sqrt(0.98 * bound)
    x = ctx1.encrypt(np.full(ctx1.slots, inside))
    got = ctx1.decrypt(x * x)
    assert np.max(np.abs(got / inside**2 - 1)) < 1e-6  # a legitimate large value just inside decrypts
    outside = math.sqrt(1.02 * bound)
    x = ctx1.encrypt(np.full(ctx1.slots, outside))
    with pytest.raises(oboro.ModulusOverflow, match="level 0"):
        ctx1.decrypt(x * x)


def test_encoding_bound_both_sides(ctx1):
    log2_q0 = math.log2(ctx1.moduli[0])
    limit = 2.0 ** (log2_q0 - ENCODING_HEADROOM_BITS) / ctx1.scale
    x = ctx1.encrypt(np.full(ctx1.slots, 0.999 * limit), level=0)
    assert np.max(np.abs(ctx1.decrypt(x) / (0.999 * limit) - 1)) < 1e-9
    with pytest.raises(oboro.InvalidArgument, match="bits of headroom"):
        ctx1.encrypt(np.full(ctx1.slots, 1.001 * limit), level=0)
    with pytest.raises(ValueError):  # the builtin catches it too
        ctx1.encrypt([1e30])
