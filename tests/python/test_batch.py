"""oboro.Batch: d ciphertexts operated on together. Every operator is checked against NumPy with
an explicit precision bound (bits = -log2(max abs error), the bounds of test_api.py) and against
the single-ciphertext path (the same operators on each element as an oboro.Ciphertext), which
runs the same C++ kernels and so must decrypt to exactly the same values. Then every error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import oboro

ADD_BITS = 24  # additions, integer multiplications, plaintext additions
MUL_BITS = 20  # one multiplication (ciphertext or plaintext) with its rescale
ROT_BITS = 22  # rotations (key switching)
D, LEN = 4, 16  # a batch of 4 ciphertexts of 16 values


def bits(got, want) -> float:
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return math.inf if err == 0 else -math.log2(err)


@pytest.fixture(scope="module", params=["S1", "S2"])
def ctx(request):
    c = oboro.Context.from_preset(request.param)
    c.keygen(rotations=[1, -1, 2, 3])
    return c


@pytest.fixture(scope="module")
def X(ctx):
    return np.random.default_rng(1).uniform(-1, 1, (D, LEN))


@pytest.fixture(scope="module")
def Y(ctx):
    return np.random.default_rng(2).uniform(-1, 1, (D, LEN))


def same_as_single(ctx, batch_result, fn, *batches):
    """fn applied to each element's Ciphertexts decrypts to exactly what the batch gave."""
    singles = [b.to_ciphertexts() for b in batches]
    got = ctx.decrypt(batch_result)
    for i in range(len(batch_result)):
        want = ctx.decrypt(fn(*[s[i] for s in singles]))
        np.testing.assert_array_equal(got[i], want)


def check_rotation_per_element(ctx, a, X, steps):
    """a.rotate(steps) rotates element i by steps[i]: against np.roll, and bit-exact against
    Ciphertext.rotate on each element."""
    got = ctx.decrypt(a.rotate(steps))
    want = np.stack([np.roll(X[i], -s) for i, s in enumerate(steps)])
    assert bits(got, want) >= ROT_BITS
    cts = a.to_ciphertexts()
    for i, s in enumerate(steps):
        np.testing.assert_array_equal(got[i], ctx.decrypt(cts[i].rotate(s)))


def test_encrypt_decrypt_and_layout(ctx, X):
    b = ctx.encrypt_batch(X)
    assert isinstance(b, oboro.Batch)
    assert len(b) == D and b.shape == (D, LEN) and b.dtype == np.float64
    assert b.level == ctx.max_level and b.poly_count == 2 and b.slots == LEN
    out = ctx.decrypt(b)
    assert out.shape == (D, LEN)
    assert bits(out, X) >= ADD_BITS
    assert bits(ctx.decrypt(b[1]), X[1]) >= ADD_BITS and bits(ctx.decrypt(b[-1]), X[-1]) >= ADD_BITS
    assert "oboro.Batch of 4" in repr(b)


def test_from_and_to_ciphertexts(ctx, X):
    cts = [ctx.encrypt(row) for row in X]
    b = oboro.Batch.from_ciphertexts(cts)
    back = b.to_ciphertexts()
    assert len(back) == D and all(isinstance(c, oboro.Ciphertext) for c in back)
    for c, orig in zip(back, cts):
        np.testing.assert_array_equal(ctx.decrypt(c), ctx.decrypt(orig))


def test_add_sub_negate(ctx, X, Y):
    a, b = ctx.encrypt_batch(X), ctx.encrypt_batch(Y)
    for got, want, fn in [
        (a + b, X + Y, lambda p, q: p + q),
        (a - b, X - Y, lambda p, q: p - q),
        (-a, -X, lambda p, q: -p),
    ]:
        assert bits(ctx.decrypt(got), want) >= ADD_BITS
        same_as_single(ctx, got, fn, a, b)
    c = a.copy()
    c += b
    assert bits(ctx.decrypt(c), X + Y) >= ADD_BITS
    c -= b
    assert bits(ctx.decrypt(c), X) >= ADD_BITS


def test_scalars_and_arrays(ctx, X, Y):
    a = ctx.encrypt_batch(X)
    cases = [
        (a + 0.5, X + 0.5, lambda p: p + 0.5, ADD_BITS),
        (1.5 - a, 1.5 - X, lambda p: 1.5 - p, ADD_BITS),
        (a * 3, X * 3, lambda p: p * 3, ADD_BITS),
        (a * 0.25, X * 0.25, lambda p: p * 0.25, MUL_BITS),
        (a / 4.0, X / 4.0, lambda p: p / 4.0, MUL_BITS),
        (a + Y[0], X + Y[0], lambda p: p + Y[0], ADD_BITS),  # one row for every element
        (a * Y[0], X * Y[0], lambda p: p * Y[0], MUL_BITS),
    ]
    for got, want, fn, b in cases:
        assert bits(ctx.decrypt(got), want) >= b
        same_as_single(ctx, got, fn, a)
    # one row per element
    for got, want, b in [(a + Y, X + Y, ADD_BITS), (a - Y, X - Y, ADD_BITS), (a * Y, X * Y, MUL_BITS),
                         (Y * a, X * Y, MUL_BITS)]:
        assert bits(ctx.decrypt(got), want) >= b
    got = ctx.decrypt(a * Y)
    cts = a.to_ciphertexts()
    for i in range(D):
        np.testing.assert_array_equal(got[i], ctx.decrypt(cts[i] * Y[i]))


def test_multiply_and_expression_with_alignment(ctx, X, Y):
    a, b = ctx.encrypt_batch(X), ctx.encrypt_batch(Y)
    prod = a * b
    assert prod.level == a.level - 1 and prod.poly_count == 2
    assert bits(ctx.decrypt(prod), X * Y) >= MUL_BITS
    same_as_single(ctx, prod, lambda p, q: p * q, a, b)
    # the product is one level down: automatic mode aligns the fresh operand
    expr = a * b + a
    assert bits(ctx.decrypt(expr), X * Y + X) >= MUL_BITS
    same_as_single(ctx, expr, lambda p, q: p * q + p, a, b)


def test_rotations(ctx, X):
    a = ctx.encrypt_batch(X)
    r = a.rotate(1)
    assert bits(ctx.decrypt(r), np.roll(X, -1, axis=1)) >= ROT_BITS
    same_as_single(ctx, r, lambda p: p.rotate(1), a)
    check_rotation_per_element(ctx, a, X, [1, 0, -1, 3])
    # automatic mode: a step is reduced modulo the slots (LEN - 1 == -1)
    assert bits(ctx.decrypt(a.rotate(LEN - 1)), np.roll(X, 1, axis=1)) >= ROT_BITS


def test_composed_rotations_match_ciphertext(X):
    """Automatic mode composes a step without a key from keyed steps, per element, as Ciphertext does."""
    ctx = oboro.Context.from_preset("S1")
    ctx.keygen()  # the signed powers of two only
    a = ctx.encrypt_batch(X)
    # 3 = 4 - 1, 7 = 8 - 1, -5 = -4 - 1: compositions of different lengths
    check_rotation_per_element(ctx, a, X, [3, 0, -5, 7])
    same_as_single(ctx, a.rotate(3), lambda p: p.rotate(3), a)


def test_conjugate(X, Y):
    ctx = oboro.Context.from_preset("S1")
    ctx.keygen(rotations=[1], conjugation=True)
    Z = X + 1j * Y
    a = ctx.encrypt_batch(Z)
    c = a.conj()
    assert c.dtype == np.complex128
    assert bits(ctx.decrypt(c), np.conj(Z)) >= ROT_BITS
    same_as_single(ctx, c, lambda p: p.conj(), a)
    # a real batch conjugates to itself and stays real, like Ciphertext.conj
    x = ctx.encrypt_batch(X)
    r = x.conj()
    assert r.dtype == np.float64
    assert bits(ctx.decrypt(r), X) >= ROT_BITS
    same_as_single(ctx, r, lambda p: p.conj(), x)
    nokey = oboro.Context.from_preset("S1")
    nokey.keygen(rotations=[1])
    with pytest.raises(oboro.MissingKey, match="conjugat"):
        nokey.encrypt_batch(X).conj()


def test_division_copies_and_drop_to_level(ctx, X):
    import copy

    a = ctx.encrypt_batch(X)
    b = a.copy()
    b /= 4.0
    assert bits(ctx.decrypt(b), X / 4.0) >= MUL_BITS
    same_as_single(ctx, b, lambda p: p / 4.0, a)
    for c in (copy.copy(a), copy.deepcopy(a)):
        assert c is not a
        np.testing.assert_array_equal(ctx.decrypt(c), ctx.decrypt(a))
    # automatic mode lands on the new level's standard scale, as Ciphertext.drop_to_level
    low = a.drop_to_level(a.level - 1)
    assert low.level == a.level - 1
    assert abs(low.scale / ctx.scale_at_level(low.level) - 1) < 2**-30  # within the alignment tolerance
    assert bits(ctx.decrypt(low), X) >= ADD_BITS
    same_as_single(ctx, low, lambda p: p.drop_to_level(a.level - 1), a)
    with pytest.raises(oboro.LevelMismatch):
        a.drop_to_level(a.level + 1)


def test_manual_mode(X, Y):
    ctx = oboro.Context.from_preset("S1", auto=False)
    ctx.keygen(rotations=[1])
    a, b = ctx.encrypt_batch(X), ctx.encrypt_batch(Y)
    t = a * b
    assert t.poly_count == 3 and t.level == a.level
    r = t.relinearize()
    assert r.poly_count == 2
    s = r.rescale()
    assert s.level == a.level - 1
    assert bits(ctx.decrypt(s), X * Y) >= MUL_BITS
    same_as_single(ctx, s, lambda p, q: (p * q).relinearize().rescale(), a, b)
    with pytest.raises(oboro.LevelMismatch, match="add"):
        s + a  # manual mode does not align
    with pytest.raises(oboro.MissingKey, match="rotat"):
        a.rotate(2)


def test_one_element_and_level_zero(ctx, X):
    b = ctx.encrypt_batch(X[:1], level=0)
    assert len(b) == 1 and b.level == 0
    assert bits(ctx.decrypt(b + b), 2 * X[:1]) >= ADD_BITS
    assert bits(ctx.decrypt(b.rotate(1)), np.roll(X[:1], -1, axis=1)) >= ROT_BITS
    with pytest.raises(oboro.LevelMismatch, match="level 0"):
        b * b
    with pytest.raises(oboro.LevelMismatch, match="rescale"):
        b.rescale()


def test_complex_values(ctx):
    Z = np.random.default_rng(3).uniform(-1, 1, (3, 8)) + 1j * np.random.default_rng(4).uniform(-1, 1, (3, 8))
    b = ctx.encrypt_batch(Z)
    assert b.dtype == np.complex128
    assert bits(ctx.decrypt(b * b), Z * Z) >= MUL_BITS


def test_errors(ctx, X, Y):
    a = ctx.encrypt_batch(X)
    with pytest.raises(oboro.InvalidArgument, match="2-D"):
        ctx.encrypt_batch(X[0])
    bad = X.copy()
    bad[2, 3] = np.nan
    with pytest.raises(oboro.InvalidArgument, match="row 2"):
        ctx.encrypt_batch(bad)
    with pytest.raises(oboro.InvalidArgument, match="do not fit"):
        ctx.encrypt_batch(np.zeros((2, ctx.slots * 2)))
    with pytest.raises(oboro.InvalidArgument, match="empty"):
        oboro.Batch.from_ciphertexts([])
    low = ctx.encrypt(X[1], level=0)
    with pytest.raises(oboro.LevelMismatch, match="element 1"):
        oboro.Batch.from_ciphertexts([ctx.encrypt(X[0]), low])
    with pytest.raises(oboro.InvalidArgument, match="shape"):
        oboro.Batch.from_ciphertexts([ctx.encrypt(X[0]), ctx.encrypt(X[1, :8])])
    short = ctx.encrypt_batch(Y[:2])
    before = ctx.decrypt(a)
    with pytest.raises(oboro.InvalidArgument, match="batch of 4"):
        a += short
    np.testing.assert_array_equal(ctx.decrypt(a), before)  # the in-place operand is unchanged
    with pytest.raises(oboro.InvalidArgument, match="shape"):
        a + ctx.encrypt_batch(Y[:, :8])
    with pytest.raises(oboro.InvalidArgument):
        a + np.ones((3, LEN))  # neither one row nor one row per element
    with pytest.raises(oboro.MissingKey, match="rotat"):
        a.rotate(5)
    with pytest.raises(oboro.InvalidArgument, match="one per element"):
        a.rotate([1, 1])
    with pytest.raises(IndexError):
        a[D]
    with pytest.raises(TypeError):
        a + ctx.encrypt(X[0])
    with pytest.raises(ZeroDivisionError):
        a / 0
    with pytest.raises(oboro.MissingKey, match="secret key"):
        ctx.public().decrypt(a)
    other = oboro.Context.from_preset(ctx.preset)
    other.keygen(rotations=[])
    with pytest.raises(oboro.ContextMismatch):
        a + other.encrypt_batch(Y)
    with pytest.raises(oboro.ContextMismatch):
        other.decrypt(a)
    with pytest.raises(oboro.ContextMismatch):
        oboro.Batch.from_ciphertexts([ctx.encrypt(X[0]), other.encrypt(X[1])])
    nokeys = oboro.Context.from_preset(ctx.preset)
    with pytest.raises(oboro.MissingKey, match="keygen"):
        nokeys.encrypt_batch(X)


# ---- device="cuda" ------------------------------------------------------------------------------

HAS_GPU = oboro.build_info()["cuda_devices"] > 0


def test_batch_device_is_cpu_by_default(ctx, X):
    assert ctx.encrypt_batch(X).device == "cpu"
    assert ctx.encrypt_batch(X, device="cpu").device == "cpu"


@pytest.mark.parametrize("device", ["gpu", "cuda0", "cuda:x", ""])
def test_batch_unknown_device_is_a_value_error(ctx, X, device):
    with pytest.raises(oboro.InvalidArgument, match="device"):
        ctx.encrypt_batch(X, device=device)


@pytest.mark.skipif(HAS_GPU, reason="a CUDA GPU is present")
def test_batch_cuda_without_gpu_is_a_clear_error(ctx, X):
    with pytest.raises(oboro.Error, match="no CUDA GPU found"):
        ctx.encrypt_batch(X, device="cuda")
    with pytest.raises(oboro.Error, match="no CUDA GPU found"):
        ctx.encrypt_batch(X, device="cuda:0")


@pytest.mark.skipif(not HAS_GPU, reason="SKIPPED: no CUDA GPU found")
def test_batch_on_cuda_matches_cpu_and_numpy(ctx, X, Y):
    gx, gy = ctx.encrypt_batch(X, device="cuda"), ctx.encrypt_batch(Y, device="cuda")
    assert gx.device == "cuda:0"
    prod = gx * gy + 0.5
    assert prod.device == "cuda:0"
    assert bits(ctx.decrypt(prod), X * Y + 0.5) >= MUL_BITS
    cx = ctx.encrypt_batch(X)
    with pytest.raises(oboro.InvalidArgument, match="memory"):
        _ = gx + cx  # a GPU batch and a CPU batch do not mix


@pytest.mark.skipif(HAS_GPU, reason="a CUDA GPU is present")
def test_batch_to_cuda_without_gpu_is_a_clear_error(ctx, X):
    b = ctx.encrypt_batch(X)
    with pytest.raises(oboro.Error, match="no CUDA GPU found"):
        b.to("cuda")
    with pytest.raises(oboro.Error, match="no CUDA GPU found"):
        oboro.Batch.from_ciphertexts(b.to_ciphertexts(), device="cuda")


@pytest.mark.parametrize("device", ["gpu", "cuda:x"])
def test_batch_to_unknown_device_is_a_value_error(ctx, X, device):
    b = ctx.encrypt_batch(X)
    with pytest.raises(oboro.InvalidArgument, match="device"):
        b.to(device)
    with pytest.raises(oboro.InvalidArgument, match="device"):
        oboro.Batch.from_ciphertexts(b.to_ciphertexts(), device=device)


def test_batch_to_cpu_is_a_copy(ctx, X):
    b = ctx.encrypt_batch(X)
    c = b.to("cpu")
    assert c.device == "cpu" and c.shape == b.shape
    assert np.array_equal(ctx.decrypt(c), ctx.decrypt(b))
    c += 1.0  # a copy: b is unchanged
    assert bits(ctx.decrypt(b), X) >= MUL_BITS
    one = oboro.Batch.from_ciphertexts([ctx.encrypt(X[0])], device="cpu")
    assert one.device == "cpu" and len(one) == 1


@pytest.mark.skipif(not HAS_GPU, reason="SKIPPED: no CUDA GPU found")
def test_batch_moves_between_cpu_and_cuda(ctx, X, Y):
    cx = ctx.encrypt_batch(X)
    gx = cx.to("cuda")
    assert gx.device == "cuda:0"
    assert np.array_equal(ctx.decrypt(gx), ctx.decrypt(cx))  # bit for bit the same ciphertexts
    # plaintext operands are encoded on the device; results match the CPU bit for bit
    assert np.array_equal(ctx.decrypt(gx * Y), ctx.decrypt(cx * Y))
    assert np.array_equal(ctx.decrypt((gx * Y[0]).to("cpu")), ctx.decrypt(cx * Y[0]))
    one = oboro.Batch.from_ciphertexts([ctx.encrypt(X[0])], device="cuda")  # one ciphertext on the GPU
    assert one.device == "cuda:0"
    assert bits(ctx.decrypt(one * one)[0], X[0] * X[0]) >= MUL_BITS


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAS_GPU, reason="SKIPPED: no CUDA GPU found"))])
def test_batch_sum_and_serialize_where_the_batch_lives(device):
    c = oboro.Context.from_preset("S1")
    powers = [2**i for i in range(c.slots.bit_length() - 1)]
    # the keys of each strategy for these 8-slot elements (hoisted's default h is the model's choice)
    c.keygen(rotations=sorted(set(c.sum_rotations(slots=8)) | set(powers)))
    X = np.random.default_rng(5).uniform(-1, 1, (3, 8))
    cx = c.encrypt_batch(X)
    gx = cx.to(device)
    # every strategy runs where the batch lives and equals Ciphertext.sum on each element
    for strategy in ("auto", "hoisted", "doubling"):
        got = gx.sum(strategy=strategy)
        assert got.device == gx.device
        per_element = [ct.sum(strategy=strategy) for ct in cx.to_ciphertexts()]
        np.testing.assert_array_equal(c.decrypt(got), np.array([c.decrypt(s) for s in per_element]))
        assert bits(c.decrypt(got)[:, 0], X.sum(axis=1)) >= 20
    assert gx.serialize() == cx.serialize()  # a GPU batch is read back once to serialize


def test_batch_selection_like_numpy_rows(ctx, X):
    b = ctx.encrypt_batch(X)
    d = len(b)
    for index in [slice(1, 3), slice(None, None, -1), slice(0, d, 2), [2, 0, 0], np.array([-1, 1]),
                  np.arange(d) % 2 == 0]:
        sel = b[index]
        assert isinstance(sel, oboro.Batch)
        assert sel.shape == X[index].shape
        np.testing.assert_allclose(ctx.decrypt(sel), X[index], atol=1e-6)
    assert isinstance(b[np.int64(1)], oboro.Ciphertext)  # a NumPy integer is an index like an int
    np.testing.assert_allclose(ctx.decrypt(b[np.int64(-1)]), X[-1], atol=1e-6)
    # the elements are copies: changing the selection leaves the batch alone
    before = ctx.decrypt(b)
    sel = b[0:2]
    sel += 1.0
    np.testing.assert_array_equal(ctx.decrypt(b), before)
    with pytest.raises(IndexError, match="out of range"):
        b[[0, d]]
    with pytest.raises(IndexError, match="mask"):
        b[np.ones(d + 1, dtype=bool)]
    with pytest.raises(oboro.InvalidArgument, match="no element"):
        b[3:1]
    with pytest.raises(TypeError, match="index"):
        b[np.ones((2, 2), dtype=int)]
    with pytest.raises(TypeError, match="index"):
        b[[0.5, 1.5]]


def test_batch_concat_like_numpy_concatenate(ctx, X, Y):
    a, b = ctx.encrypt_batch(X), ctx.encrypt_batch(Y[:2])
    joined = oboro.Batch.concat([a, b, a[:1]])
    assert len(joined) == len(X) + 3
    np.testing.assert_allclose(ctx.decrypt(joined), np.concatenate([X, Y[:2], X[:1]]), atol=1e-6)
    with pytest.raises(oboro.InvalidArgument, match="empty"):
        oboro.Batch.concat([])
    with pytest.raises(oboro.InvalidArgument, match="shape"):
        oboro.Batch.concat([a, ctx.encrypt_batch(Y[:, :8])])
    with pytest.raises(oboro.LevelMismatch, match="batch 1"):
        oboro.Batch.concat([a, a.drop_to_level(0)])


def test_device_keys_leave_the_device_with_their_context():
    """A device keeps a copy of each key it switched with (memory_info()['device_key_bytes']) while the
    key lives; the copies of a context's keys go once the context is gone, before the device takes
    another key: a process making contexts again and again does not fill the device."""
    import gc

    def device_bytes():
        return oboro.memory_info()["device_key_bytes"].get("cuda-emulated", 0)

    def use_keys():
        c = oboro.Context.from_preset("S1")
        c.keygen()
        x = c.encrypt_batch(np.ones((1, 4)), device="cuda-emulated")
        np.testing.assert_allclose(c.decrypt(x * x)[0, :4], 1.0, atol=1e-3)  # relinearized on the device
        return c

    first = use_keys()
    held = device_bytes()
    assert held > 0
    del first
    gc.collect()
    second = use_keys()  # uploads its own key: the first context's goes
    assert 0 < device_bytes() <= held
    del second


def test_a_missing_gpu_leaves_no_device_behind():
    """Asking for a GPU that is not there raises and leaves nothing in memory_info()'s devices (an
    empty entry there once crashed it)."""
    if HAS_GPU:
        pytest.skip("a GPU is present")
    ctx = oboro.Context.from_preset("S1")
    with pytest.raises(oboro.Error, match="no CUDA GPU"):
        ctx.encrypt_batch(np.ones((1, 4)), device="cuda:0")
    devices = oboro.memory_info()["device_key_bytes"]
    assert not any(name.startswith("cuda:") for name in devices)
