"""oboro.Plaintext: Context.encode / decode, ciphertext-plaintext operators in both modes, and
plaintext serialization; against NumPy with explicit precision bounds (bits)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import oboro

ADD_BITS = 24
MUL_BITS = 20


def bits(got, want) -> float:
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return math.inf if err == 0 else -math.log2(err)


@pytest.fixture(scope="module")
def ctx():
    return oboro.Context.from_preset("S2").keygen(rotations=[])


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def test_encode_decode(ctx, rng):
    x = rng.uniform(-1, 1, (3, 4))
    pt = ctx.encode(x)
    assert (pt.shape, pt.dtype, pt.level, pt.slots) == ((3, 4), np.float64, ctx.max_level, 16)
    assert pt.scale == ctx.scale_at_level(ctx.max_level)
    assert bits(ctx.decode(pt), x) >= 30
    z = x + 1j * x
    low = ctx.encode(z, level=1, scale=2.0**30, slots=32)
    assert (low.level, low.scale, low.slots, low.dtype) == (1, 2.0**30, 32, np.complex128)
    assert bits(ctx.decode(low), z) >= 20
    assert "Plaintext" in repr(pt)


def test_operators_automatic(ctx, rng):
    x, y = rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8)
    ct, pt = ctx.encrypt(x), ctx.encode(y)
    assert bits(ctx.decrypt(ct + pt), x + y) >= ADD_BITS
    assert bits(ctx.decrypt(pt - ct), y - x) >= ADD_BITS
    assert bits(ctx.decrypt(ct - pt), x - y) >= ADD_BITS
    prod = ct * pt
    assert prod.level == ctx.max_level - 1
    assert prod.scale == ctx.scale_at_level(prod.level)  # standard scale, like ct * ct
    assert bits(ctx.decrypt(pt * ct), x * y) >= MUL_BITS
    # the product mixes with ciphertext products without any fix-up
    assert bits(ctx.decrypt(prod + ct * ct), x * y + x * x) >= MUL_BITS
    # a plaintext above the ciphertext's level is dropped to it
    deep = ct * ct
    assert bits(ctx.decrypt(deep * ctx.encode(y)), x * x * y) >= MUL_BITS - 2
    ct2 = ctx.encrypt(x)
    ct2 += pt
    assert bits(ctx.decrypt(ct2), x + y) >= ADD_BITS


def test_operators_manual(rng):
    m = oboro.Context.from_preset("S2", auto=False).keygen(rotations=[])
    x, y = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)
    ct = m.encrypt(x)
    p = ct * m.encode(y)
    assert p.level == ct.level  # manual: no rescale
    assert bits(m.decrypt(p.rescale()), x * y) >= MUL_BITS
    with pytest.raises(oboro.LevelMismatch):
        ct + m.encode(y, level=1)
    with pytest.raises(oboro.ScaleMismatch):
        ct + m.encode(y, scale=2.0**35)


def test_bad_operands(ctx, rng):
    ct = ctx.encrypt(rng.uniform(-1, 1, 8))
    with pytest.raises(oboro.InvalidArgument, match="shape"):
        ct + ctx.encode(np.ones(4))
    with pytest.raises(TypeError):
        ct / ctx.encode(np.ones(8))
    other = oboro.Context.from_preset("S1")
    with pytest.raises(oboro.ContextMismatch):
        ct + other.encode(np.ones(8))
    with pytest.raises(oboro.ContextMismatch):
        ctx.decode(other.encode([1.0]))
    with pytest.raises(oboro.InvalidArgument, match="do not fit"):
        ctx.encode(np.ones(ctx.slots + 1))
    with pytest.raises(oboro.LevelMismatch):
        ctx.encode([1.0], level=7)
    with pytest.raises(oboro.LevelMismatch):
        ctx.encode([1.0], level=1).drop_to_level(2)


def test_serialization(ctx, rng, tmp_path):
    x = rng.uniform(-1, 1, (2, 3)) * 1j
    pt = ctx.encode(x, level=2)
    back = oboro.Plaintext.deserialize(ctx, pt.serialize())
    assert (back.shape, back.dtype, back.level, back.scale) == (pt.shape, pt.dtype, pt.level, pt.scale)
    assert np.array_equal(ctx.decode(back), ctx.decode(pt))
    pt.save(tmp_path / "p.bin")
    assert np.array_equal(ctx.decode(oboro.Plaintext.load(ctx, tmp_path / "p.bin")), ctx.decode(pt))
    assert oboro.serialized_info(pt.serialize())["type"] == "plaintext"
    data = pt.serialize()
    with pytest.raises(oboro.SerializationError, match="truncated"):
        oboro.Plaintext.deserialize(ctx, data[:-20])
    with pytest.raises(oboro.SerializationError, match="other parameters"):
        oboro.Plaintext.deserialize(oboro.Context.from_preset("S1"), data)
    with pytest.raises(oboro.SerializationError, match="not a plaintext"):
        oboro.Plaintext.deserialize(ctx, ctx.encrypt([1.0]).serialize())
