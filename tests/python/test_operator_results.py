"""The binary operators of Ciphertext and Batch write a sum or difference of two encrypted operands
straight into a new result (no copy of the left operand first): the results match the in-place
forms and NumPy, the operands are left unchanged, and the cases that need preparation (levels or
scales to align) still take the copying path, in automatic mode; manual mode still refuses them."""

from __future__ import annotations

import numpy as np
import pytest

import oboro


@pytest.fixture(scope="module")
def ctx():
    c = oboro.Context.from_preset("S1")
    c.keygen()
    return c


def test_ciphertext_sum_and_difference_leave_operands_unchanged(ctx):
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, 64), rng.uniform(-1, 1, 64)
    a, b = ctx.encrypt(x), ctx.encrypt(y)
    before_a, before_b = a.serialize(), b.serialize()
    s, d, r = a + b, a - b, b - a
    assert a.serialize() == before_a and b.serialize() == before_b
    np.testing.assert_allclose(ctx.decrypt(s), x + y, atol=1e-6)
    np.testing.assert_allclose(ctx.decrypt(d), x - y, atol=1e-6)
    np.testing.assert_allclose(ctx.decrypt(r), y - x, atol=1e-6)
    c = +a  # a copy
    c += b  # the in-place form: the same ciphertext as a + b
    assert c.serialize() == s.serialize()


def test_ciphertext_sum_across_levels_in_both_modes(ctx):
    x = np.linspace(-1, 1, 32)
    a = ctx.encrypt(x)
    low = a * 0.5  # one level down, in automatic mode
    assert low.level == a.level - 1
    np.testing.assert_allclose(ctx.decrypt(a + low), 1.5 * x, atol=1e-6)
    np.testing.assert_allclose(ctx.decrypt(low - a), -0.5 * x, atol=1e-6)
    with ctx.manual():
        with pytest.raises(oboro.LevelMismatch):
            a + low


def test_batch_sum_and_difference_leave_operands_unchanged(ctx):
    rng = np.random.default_rng(2)
    X, Y = rng.uniform(-1, 1, (5, 16)), rng.uniform(-1, 1, (5, 16))
    A, B = ctx.encrypt_batch(X), ctx.encrypt_batch(Y)
    before_a, before_b = ctx.decrypt(A), ctx.decrypt(B)
    S, D = A + B, A - B
    np.testing.assert_array_equal(ctx.decrypt(A), before_a)
    np.testing.assert_array_equal(ctx.decrypt(B), before_b)
    np.testing.assert_allclose(ctx.decrypt(S), X + Y, atol=1e-6)
    np.testing.assert_allclose(ctx.decrypt(D), X - Y, atol=1e-6)
    low = B * 2.0  # one level down: the copying path aligns it
    np.testing.assert_allclose(ctx.decrypt(A + low), X + 2 * Y, atol=1e-6)
    A += B
    np.testing.assert_allclose(ctx.decrypt(A), ctx.decrypt(S), atol=1e-9)
