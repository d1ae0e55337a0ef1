"""Hoisted rotations (Ciphertext.rotate_many) and rotate-and-sum (Ciphertext.sum,
Context.sum_rotations) against NumPy, with explicit precision bounds, and their errors.

Precision is -log2(max abs error). A sum of 2^M fresh values loses about M/2 bits to the summed
noise: ~21 bits for all 4096 slots of S1 (C++ test_ckks_trace); the bounds keep 3-4 bits of margin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import oboro

ROT_BITS = 22  # one rotation (key switching), as in test_api.py
SUM_BITS = {4096: 17, 8192: 15}  # sums over all slots, by slot count (S1: M = 12, S2: M = 13)
BLOCK_BITS = 19  # block and strided sums of <= 16 terms


def bits(got, want) -> float:
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return math.inf if err == 0 else -math.log2(err)


@pytest.fixture(scope="module", params=["S1", "S2"])
def ctx(request):
    """Keys for every strategy of the sums tested below (and the default +-powers of two)."""
    c = oboro.Context.from_preset(request.param)
    steps = set(range(1, 8)) | {-1, 2, 4, 5}
    for strategy in ("doubling", "auto"):
        steps |= set(c.sum_rotations(strategy=strategy))
    steps |= set(c.sum_rotations(strategy="hoisted", h=4))
    for h in (1, 2, 3):
        steps |= set(c.sum_rotations(block=8, strategy="hoisted", h=h))
        steps |= set(c.sum_rotations(stride=16, count=8, strategy="hoisted", h=h))
    c.keygen(rotations=sorted(steps))
    return c


@pytest.fixture(scope="module")
def x(ctx):
    return np.random.default_rng(7).uniform(-1, 1, ctx.slots)


@pytest.mark.parametrize("strategy,h", [("doubling", None), ("hoisted", None), ("hoisted", 4), ("auto", None)])
def test_total_sum(ctx, x, strategy, h):
    got = ctx.decrypt(ctx.encrypt(x).sum(strategy=strategy, h=h))
    assert got.shape == x.shape
    assert bits(got, np.full_like(x, x.sum())) >= SUM_BITS[ctx.slots]


def test_strategies_agree(ctx, x):
    ct = ctx.encrypt(x)
    d = ctx.decrypt(ct.sum(strategy="doubling"))
    for h in (None, 4):
        assert bits(ctx.decrypt(ct.sum(strategy="hoisted", h=h)), d) >= SUM_BITS[ctx.slots]


@pytest.mark.parametrize("h", [None, 1, 2, 3])
def test_block_sum_first_slot(ctx, x, h):
    strategy = "auto" if h is None else "hoisted"
    got = ctx.decrypt(ctx.encrypt(x).sum(block=8, strategy=strategy, h=h))
    assert bits(got[::8], x.reshape(-1, 8).sum(axis=1)) >= BLOCK_BITS


@pytest.mark.parametrize("h", [1, 2, 3])
def test_stride_sum(ctx, x, h):
    got = ctx.decrypt(ctx.encrypt(x).sum(stride=16, count=8, strategy="hoisted", h=h))
    want = sum(np.roll(x, -16 * j) for j in range(8))
    assert bits(got, want) >= BLOCK_BITS


def test_small_vector_sums_its_values(ctx):
    v = np.array([0.5, -1.25, 2.0, 0.75, 0.125])  # 8 slots, the padding is zero
    got = ctx.decrypt(ctx.encrypt(v).sum(strategy="doubling"))
    assert bits(got, np.full(5, v.sum())) >= ROT_BITS


def test_sum_of_product_relinearizes_first(ctx, x):
    ct = ctx.encrypt(x)
    got = ctx.decrypt((ct * ct).sum())  # size 3 before the sum: automatic mode relinearizes
    assert bits(got, np.full_like(x, (x * x).sum())) >= SUM_BITS[ctx.slots] - 1


def test_rotate_many_matches_rotate(ctx, x):
    ct = ctx.encrypt(x)
    steps = [1, 2, 5, -1, 3, 0, ctx.slots + 1]
    many = ct.rotate_many(steps)
    assert isinstance(many, list) and len(many) == len(steps)
    for k, c in zip(steps, many):
        got = ctx.decrypt(c)
        assert bits(got, np.roll(x, -k)) >= ROT_BITS, k
        assert bits(got, ctx.decrypt(ct.rotate(k))) >= ROT_BITS, k


def test_rotate_many_composes_unkeyed_steps(ctx, x):
    # 9 has no key of its own: automatic mode composes it (like rotate) and hoists the others
    got = ctx.encrypt(x).rotate_many([9, 1])
    assert bits(ctx.decrypt(got[0]), np.roll(x, -9)) >= ROT_BITS - 1
    assert bits(ctx.decrypt(got[1]), np.roll(x, -1)) >= ROT_BITS


def test_sum_rotations_lists(ctx):
    slots = ctx.slots
    m = int(math.log2(slots))
    assert ctx.sum_rotations(strategy="doubling") == [2**i for i in range(m)]
    assert ctx.sum_rotations(strategy="hoisted", h=m) == [2**i for i in range(m)]
    assert ctx.sum_rotations(block=8, strategy="hoisted", h=1) == [1, 2, 3, 4, 5, 6, 7]
    assert ctx.sum_rotations(slots=16, strategy="doubling") == [1, 2, 4, 8]
    # every listed key is a rotation within the slots
    assert all(0 < s < slots for s in ctx.sum_rotations())


# ---- errors -------------------------------------------------------------------------------------


def test_missing_keys_are_named():
    c = oboro.Context.from_preset("S1").keygen(rotations=[1, 2])
    ct = c.encrypt(np.ones(c.slots))
    with pytest.raises(oboro.MissingKey, match=r"rotate_and_sum \(doubling\).*rotations by 4, 8, 16"):
        ct.sum(strategy="doubling")
    with pytest.raises(oboro.MissingKey, match="automatic choice"):
        ct.sum()
    with c.manual():
        with pytest.raises(oboro.MissingKey, match="rotate_many.*by 3, 7"):
            ct.rotate_many([1, 3, 7])


def test_bad_arguments(ctx, x):
    ct = ctx.encrypt(x)
    with pytest.raises(oboro.InvalidArgument, match="strategy 'fast'"):
        ct.sum(strategy="fast")
    with pytest.raises(oboro.InvalidArgument, match="h = 3 applies to strategy='hoisted' only"):
        ct.sum(h=3)
    with pytest.raises(oboro.InvalidArgument, match="h = 0"):
        ct.sum(strategy="hoisted", h=0)
    with pytest.raises(oboro.InvalidArgument, match="h = 99"):
        ct.sum(strategy="hoisted", h=99)
    with pytest.raises(oboro.InvalidArgument, match="block = 6"):
        ct.sum(block=6)
    with pytest.raises(oboro.InvalidArgument, match="either block or stride"):
        ct.sum(block=8, stride=2)
    with pytest.raises(oboro.InvalidArgument, match="does not fit"):
        ct.sum(stride=ctx.slots // 2, count=4)
    with pytest.raises(oboro.InvalidArgument, match="stride 0"):
        ct.sum(stride=0, count=2)
    with pytest.raises(TypeError):
        ct.sum(block="8")
    with pytest.raises(TypeError):
        ct.rotate_many(3)


def test_manual_mode_needs_exact_keys_and_relinearization():
    c = oboro.Context.from_preset("S1")
    c = oboro.Context.from_preset("S1", auto=False)
    c.keygen(rotations=c.sum_rotations(strategy="doubling"))
    x = np.random.default_rng(1).uniform(-1, 1, c.slots)
    ct = c.encrypt(x)
    with pytest.raises(oboro.InvalidArgument, match="step 4096 is out of range"):
        ct.rotate_many([1, 4096])
    with pytest.raises(oboro.InvalidArgument, match="relinearize"):
        (ct * ct).sum(strategy="doubling")
    assert bits(c.decrypt(ct.sum(strategy="doubling")), np.full_like(x, x.sum())) >= SUM_BITS[4096]
