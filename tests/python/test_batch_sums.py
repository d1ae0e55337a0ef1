"""Batch.sum, Batch.rotate_many and the Batch properties shared with Ciphertext: against NumPy
with explicit precision bounds (those of test_trace.py) and bit-exact against the same call on
each element as an oboro.Ciphertext (the batched doubling runs the same kernels; hoisted and
auto run the same C++ rotate_and_sum per element). Then the errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import oboro
from test_batch import bits

ROT_BITS = 22
SUM_BITS = 17  # a sum of <= 16 values or of the batch's 16 slots
D, LEN = 3, 16


@pytest.fixture(scope="module", params=["S1", "S2"])
def ctx(request):
    c = oboro.Context.from_preset(request.param)
    steps = {1, 2, 3, -1, 5}
    for strategy in ("doubling", "auto"):
        steps |= set(c.sum_rotations(slots=LEN, strategy=strategy))
        steps |= set(c.sum_rotations(slots=LEN, block=4, strategy=strategy))
        steps |= set(c.sum_rotations(slots=LEN, stride=2, count=4, strategy=strategy))
    for h in (1, 2):
        steps |= set(c.sum_rotations(slots=LEN, strategy="hoisted", h=h))
    c.keygen(rotations=sorted(steps))
    return c


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(3).uniform(-1, 1, (D, LEN))


def assert_same_as_single(ctx, batch_result, batch, fn):
    got = ctx.decrypt(batch_result)
    for i, ct in enumerate(batch.to_ciphertexts()):
        np.testing.assert_array_equal(got[i], ctx.decrypt(fn(ct)))


@pytest.mark.parametrize("strategy,h", [("doubling", None), ("hoisted", None), ("hoisted", 1), ("hoisted", 2),
                                        ("auto", None)])
def test_total_sum(ctx, X, strategy, h):
    b = ctx.encrypt_batch(X)
    s = b.sum(strategy=strategy, h=h)
    assert (s.level, s.scale, s.shape) == (b.level, b.scale, b.shape)
    got = ctx.decrypt(s)
    assert bits(got, np.repeat(X.sum(axis=1, keepdims=True), LEN, axis=1)) >= SUM_BITS
    assert_same_as_single(ctx, s, b, lambda ct: ct.sum(strategy=strategy, h=h))


@pytest.mark.parametrize("strategy", ["doubling", "auto"])
def test_block_and_strided_sums(ctx, X, strategy):
    b = ctx.encrypt_batch(X)
    got = ctx.decrypt(b.sum(block=4, strategy=strategy))[:, ::4]
    assert bits(got, X.reshape(D, 4, 4).sum(axis=2)) >= SUM_BITS
    assert_same_as_single(ctx, b.sum(block=4, strategy=strategy), b, lambda ct: ct.sum(block=4, strategy=strategy))
    got = ctx.decrypt(b.sum(stride=2, count=4, strategy=strategy))
    want = sum(np.roll(X, -2 * j, axis=1) for j in range(4))
    assert bits(got, want) >= SUM_BITS
    assert_same_as_single(ctx, b.sum(stride=2, count=4, strategy=strategy), b,
                          lambda ct: ct.sum(stride=2, count=4, strategy=strategy))


def test_sum_of_one_element_and_one_term(ctx, X):
    b = ctx.encrypt_batch(X[:1])
    assert bits(ctx.decrypt(b.sum(strategy="doubling")), np.full((1, LEN), X[0].sum())) >= SUM_BITS
    # count=1: no round, the values unchanged
    np.testing.assert_array_equal(ctx.decrypt(b.sum(stride=1, count=1)), ctx.decrypt(b))


def test_sum_relinearizes_size3_in_auto_mode(ctx, X):
    b = ctx.encrypt_batch(X)
    with ctx.manual():
        sq = (b * b).rescale()
    assert sq.poly_count == 3
    got = ctx.decrypt(sq.sum(strategy="doubling"))
    assert bits(got, np.repeat((X * X).sum(axis=1, keepdims=True), LEN, axis=1)) >= SUM_BITS - 3
    # rotate_many relinearizes too, and leaves the size-3 batch as it was
    left1, = sq.rotate_many([1])
    assert left1.poly_count == 2 and sq.poly_count == 3
    assert bits(ctx.decrypt(left1), np.roll(X * X, -1, axis=1)) >= ROT_BITS - 3


def test_rotate_many(ctx, X):
    b = ctx.encrypt_batch(X)
    steps = [1, -1, 3, 0, 17]  # 17: reduced modulo the 16 slots in automatic mode
    out = b.rotate_many(steps)
    assert len(out) == len(steps)
    per_element = [ct.rotate_many(steps) for ct in b.to_ciphertexts()]  # hoisted, as the batch's
    for j, (k, r) in enumerate(zip(steps, out)):
        got = ctx.decrypt(r)
        assert bits(got, np.roll(X, -k, axis=1)) >= ROT_BITS
        for i, rotated in enumerate(per_element):
            np.testing.assert_array_equal(got[i], ctx.decrypt(rotated[j]))
    assert b.rotate_many([]) == []


def test_properties(ctx):
    A = np.random.default_rng(4).uniform(-1, 1, (5, 2, 3)) + 0j
    b = ctx.encrypt_batch(A)
    ct = b[0]
    assert b.shape == (5, 2, 3) and b.element_shape == ct.shape == (2, 3)
    assert b.ndim == 3 == ct.ndim + 1
    assert b.size == 30 == 5 * ct.size
    assert b.dtype == ct.dtype == np.complex128
    assert b.auto is True and ct.auto is True
    with ctx.manual():
        assert b.auto is False and ct.auto is False
    assert b.auto is True
    assert (b.level, b.scale, b.slots, b.poly_count) == (ct.level, ct.scale, ct.slots, ct.poly_count)


def test_errors(ctx, X):
    b = ctx.encrypt_batch(X)
    with pytest.raises(oboro.InvalidArgument, match="block = 3"):
        b.sum(block=3)
    with pytest.raises(oboro.InvalidArgument, match="either block or stride"):
        b.sum(block=4, stride=1)
    with pytest.raises(oboro.InvalidArgument, match="strategy 'fast'"):
        b.sum(strategy="fast")
    with pytest.raises(oboro.InvalidArgument, match="h = 2 applies to strategy='hoisted' only"):
        b.sum(strategy="doubling", h=2)
    with pytest.raises(oboro.InvalidArgument, match="h = 9"):
        b.sum(strategy="hoisted", h=9)
    bare = oboro.Context.from_preset("S1")
    bare.keygen(rotations=[5])  # no power of two
    nb = bare.encrypt_batch(X)
    with pytest.raises(oboro.MissingKey, match="doubling.*rotations by"):
        nb.sum(strategy="doubling")
    with pytest.raises(oboro.MissingKey):
        nb.sum(strategy="hoisted", h=1)
    with bare.manual():
        with pytest.raises(oboro.MissingKey, match="3"):
            nb.rotate_many([5, 3])
        with pytest.raises(oboro.InvalidArgument, match="3 polynomials"):
            (nb * nb).sum(strategy="doubling")  # manual mode: no automatic relinearization
