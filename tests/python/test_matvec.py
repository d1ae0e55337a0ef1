"""Plaintext matrix times encrypted vector (oboro.linalg.matvec, M @ ct, ct @ M, PlainMatrix) and
the vector statistics (dot, mean, var) against NumPy with bounds in bits: square, rectangular,
small-in-many-slots and beyond-the-slots shapes, Ciphertext and Batch, both modes, levels and
scales, the key helper, and the errors raised before any work."""

import math

import numpy as np
import pytest

import oboro
import oboro.linalg as la

# N = 2^12 without the security check (test speed), 4 levels of 40-bit primes.
SMALL = dict(log_n=12, moduli_bits=[60, 40, 40, 40, 40], special_bits=[61], security=None)
FRESH_BITS = 40 - math.log2(9 * 4096 / 6) - 1.5  # as in the C++ tests (docs/precision.md)


def bits(got, want):
    err = np.max(np.abs(np.asarray(got) - np.asarray(want)))
    return 60.0 if err == 0 else -math.log2(err)


def bound(cols):
    """The fresh precision less the growth of a sum of `cols` products of entries in [-1, 1]."""
    return FRESH_BITS - 0.5 * math.log2(cols) - 1


@pytest.fixture(scope="module")
def ctx():
    c = oboro.Context(**SMALL)
    steps = set()
    for shape, slots in [((64, 64), 64), ((10, 50), 64), ((50, 10), 64), ((64, 64), 256), ((100, 150), 64),
                         ((64, 64), None), ((1, 1), None)]:
        steps |= set(la.rotation_steps(c, shape, method="matvec", slots=slots))
    c.keygen(rotations=sorted(steps | set(c.sum_rotations(slots=64))), relin=True)
    return c


def rng(seed):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("rows,cols,slots", [(64, 64, 64), (64, 64, 256), (10, 50, 64), (50, 10, 64), (1, 1, 1)])
def test_matvec_matches_numpy(ctx, rows, cols, slots):
    M = rng(rows * cols).uniform(-1, 1, (rows, cols))
    v = rng(cols).uniform(-1, 1, cols)
    x = ctx.encrypt(v, slots=slots)
    for y in (M @ x, la.matvec(M, x), la.PlainMatrix(ctx, M) @ x):
        assert y.shape == (rows,)
        assert y.level == x.level - 1
        assert y.scale == ctx.scale_at_level(y.level)  # automatic mode: the standard scale, exactly
        assert bits(ctx.decrypt(y), M @ v) >= bound(cols)


def test_vector_times_matrix_is_the_transpose(ctx):
    M = rng(1).uniform(-1, 1, (50, 10))
    v = rng(2).uniform(-1, 1, 50)
    y = ctx.encrypt(v, slots=64) @ M
    assert y.shape == (10,)
    assert bits(ctx.decrypt(y), v @ M) >= bound(50)


def test_beyond_the_slots_in_pieces(ctx):
    M = rng(3).uniform(-1, 1, (100, 150))
    v = rng(4).uniform(-1, 1, 150)
    pieces = [ctx.encrypt(v[0:64]), ctx.encrypt(v[64:128]), ctx.encrypt(v[128:], slots=64)]
    y = la.matvec(M, pieces)
    assert [p.shape for p in y] == [(64,), (36,)]
    assert bits(np.concatenate([ctx.decrypt(p) for p in y]), M @ v) >= bound(150)


def test_batch_is_each_element(ctx):
    M = rng(5).uniform(-1, 1, (10, 50))
    V = rng(6).uniform(-1, 1, (3, 50))
    b = ctx.encrypt_batch(V, slots=64)
    y = M @ b
    assert y.shape == (3, 10)
    assert bits(ctx.decrypt(y), V @ M.T) >= bound(50)


def test_plain_matrix_reuses_its_encoding_and_transposes(ctx):
    M = rng(7).uniform(-1, 1, (64, 64))
    W = la.PlainMatrix(ctx, M)
    assert W.shape == (64, 64) and W.T.shape == (64, 64)
    assert W.diagonal_count(64) == 64
    v = rng(8).uniform(-1, 1, 64)
    x = ctx.encrypt(v)
    assert bits(ctx.decrypt(W @ x), M @ v) >= bound(64)
    assert bits(ctx.decrypt(W.T @ x), M.T @ v) >= bound(64)
    assert "64, 64" in repr(W)


def test_diagonals_kept_or_encoded_at_each_product():
    """keep_diagonals=False encodes the dense diagonals at each product (no memory kept), True keeps
    them once per level, None (the default) keeps them where they fit in half of the machine's memory
    (these do): the same results within the bound, on a Ciphertext, a Batch and the transpose, at
    full slots (the dense diagonals; those of fewer slots repeat and are kept compact, small, in
    every case)."""
    c = oboro.Context(**SMALL)
    slots = c.slots
    M = rng(30).uniform(-1, 1, (64, 64))
    c.keygen(rotations=sorted(set(la.rotation_steps(c, M.shape, method="matvec", slots=slots))
                              | set(la.rotation_steps(c, M.T.shape, method="matvec", slots=slots))), relin=True)
    v = rng(31).uniform(-1, 1, 64)
    x = c.encrypt(v, slots=slots)
    kept, on_use, auto = (la.PlainMatrix(c, M, keep_diagonals=k) for k in (True, False, None))
    assert (kept.keep_diagonals, on_use.keep_diagonals, auto.keep_diagonals) == (True, False, None)
    assert kept.memory_bytes == on_use.memory_bytes == auto.memory_bytes == 0  # nothing encoded yet
    for W in (kept, on_use, auto):
        assert bits(c.decrypt(W @ x)[:64], M @ v) >= bound(64)
        assert W.T.keep_diagonals == W.keep_diagonals
        assert bits(c.decrypt(W.T @ x)[:64], M.T @ v) >= bound(64)
    # the dense diagonals at level 4 over Q_4 * P (5 + 1 primes of N = 2^12)
    assert kept.memory_bytes == auto.memory_bytes == kept.diagonal_count(slots) * 6 * 4096 * 8 > 0
    assert on_use.memory_bytes == 0
    batch = c.encrypt_batch(np.stack([v, -v]), slots=slots)
    got = c.decrypt(on_use @ batch)[:, :64]
    assert bits(got, np.stack([M @ v, -(M @ v)])) >= bound(64) and on_use.memory_bytes == 0


def test_banded_matrix_needs_its_own_steps():
    c = oboro.Context(**SMALL)
    M = np.diag(np.arange(1.0, 65.0)) + np.diag(np.ones(63), 1) + np.diag(np.ones(63), -1)
    steps = la.rotation_steps(c, M, method="matvec")
    assert len(steps) < len(la.rotation_steps(c, M.shape, method="matvec"))
    la.keygen(c, M, method="matvec")
    v = rng(9).uniform(-1, 1, 64)
    assert bits(c.decrypt(M @ c.encrypt(v)), M @ v) >= FRESH_BITS - 8
    assert la.PlainMatrix(c, M).diagonal_count(64) == 3


def test_the_steps_of_a_shape_are_those_of_a_dense_matrix_without_building_one():
    c = oboro.Context(**SMALL)
    for shape in ((64, 64), (5, 9), (100, 30)):
        assert la.rotation_steps(c, shape, method="matvec") == la.rotation_steps(c, np.ones(shape), method="matvec")
    # a full-slot square shape: as a dense float matrix it would take slots^2 * 8 bytes
    big = (c.slots, c.slots)
    steps = la.rotation_steps(c, big, method="matvec")
    assert 0 < len(steps) < c.slots


def test_manual_mode_keeps_the_scale(ctx):
    M = rng(10).uniform(-1, 1, (64, 64))
    v = rng(11).uniform(-1, 1, 64)
    x = ctx.encrypt(v)
    with ctx.manual():
        y = M @ x
    assert y.level == x.level - 1
    assert math.isclose(y.scale, x.scale, rel_tol=1e-12)
    assert bits(ctx.decrypt(y), M @ v) >= bound(64)


def test_chained_products_down_to_level_zero(ctx):
    M = rng(12).uniform(-1, 1, (64, 64)) / 8
    v = rng(13).uniform(-1, 1, 64)
    x = ctx.encrypt(v)
    want = v
    while x.level > 0:
        x = M @ x
        want = M @ want
    assert x.level == 0 and x.scale == ctx.scale_at_level(0)
    assert bits(ctx.decrypt(x), want) >= FRESH_BITS - 6
    with pytest.raises(oboro.LevelMismatch, match="level"):
        M @ x


def test_zero_and_huge_entries(ctx):
    v = rng(14).uniform(-1, 1, 64)
    x = ctx.encrypt(v)
    assert bits(ctx.decrypt(np.zeros((64, 64)) @ x), np.zeros(64)) >= FRESH_BITS
    M = rng(15).uniform(-1, 1, (64, 64)) * 1000
    assert bits(ctx.decrypt(M @ x), M @ v) >= bound(64) - math.log2(1000)


def test_errors_before_any_work(ctx):
    x = ctx.encrypt(rng(16).uniform(-1, 1, 50), slots=64)
    with pytest.raises(oboro.InvalidArgument, match="needs a vector of 40 values; x has 50"):
        np.ones((10, 40)) @ x
    with pytest.raises(oboro.InvalidArgument, match="encrypt x with slots=128"):
        np.ones((100, 50)) @ x
    with pytest.raises(oboro.InvalidArgument, match="2-D matrix"):
        la.matvec(np.ones(50), x)
    with pytest.raises(oboro.InvalidArgument, match="real"):
        np.ones((10, 50), dtype=complex) @ x
    with pytest.raises(oboro.InvalidArgument, match=r"entry \(2, 3\)"):
        M = np.ones((10, 50))
        M[2, 3] = np.inf
        M @ x
    with pytest.raises(oboro.InvalidArgument, match="1-D"):
        np.ones((4, 4)) @ ctx.encrypt(np.ones((2, 2)))
    with pytest.raises(oboro.InvalidArgument, match="every piece but the last"):
        la.matvec(np.ones((10, 100)), [ctx.encrypt(np.ones(50), slots=64), ctx.encrypt(np.ones(50), slots=64)])
    with pytest.raises(TypeError, match="Ciphertext, a Batch"):
        la.matvec(np.ones((2, 2)), [1, 2])
    other = oboro.Context(**SMALL)
    other.keygen(rotations=[])
    with pytest.raises(oboro.MissingKey, match="no Galois key for the rotations by .*rotation_steps"):
        np.ones((16, 16)) @ other.encrypt(np.ones(16))
    # a PlainMatrix holds no key: it serves every context of its parameters, and only those
    assert bits(ctx.decrypt(la.PlainMatrix(other, np.eye(64)) @ ctx.encrypt(np.ones(64))), np.ones(64)) > 20
    fewer_levels = oboro.Context(**{**SMALL, "moduli_bits": [60, 40, 40]})
    with pytest.raises(oboro.ContextMismatch, match="another parameter set"):
        la.PlainMatrix(fewer_levels, np.ones((64, 64))) @ ctx.encrypt(np.ones(64))
    with pytest.raises(ValueError, match="slots= applies"):
        la.rotation_steps(ctx, (4, 4, 4), method="3d", slots=64)


# ---- dot, mean, var ----


def test_dot_mean_var(ctx):
    v = rng(17).uniform(-1, 1, 50)
    w = rng(18).uniform(-1, 1, 50)
    x = ctx.encrypt(v)
    n = len(v)
    d = x.dot(w)
    assert d.shape == (50,) and d.level == x.level - 1
    assert bits(ctx.decrypt(d), np.full(n, v @ w)) >= bound(n)
    assert bits(ctx.decrypt(x.dot(ctx.encrypt(w))), np.full(n, v @ w)) >= bound(n)
    m = x.mean()
    assert m.level == x.level - 1
    assert bits(ctx.decrypt(m), np.full(n, v.mean())) >= FRESH_BITS - 2
    s = x.var()
    assert s.level == x.level - 3
    assert bits(ctx.decrypt(s), np.full(n, v.var())) >= FRESH_BITS - 4


def test_mean_ignores_padding_slots_after_a_rotation(ctx):
    v = rng(19).uniform(-1, 1, 50)  # 64 slots: the 14 padding slots hold zeros ...
    r = ctx.encrypt(v).rotate(3)  # ... which the rotation moves into the last 3 of the 50
    seen = ctx.decrypt(r)
    assert bits(ctx.decrypt(r.mean()), np.full(50, seen.mean())) >= FRESH_BITS - 2


def test_var_of_values_far_from_zero(ctx):
    v = 100 + rng(20).uniform(-1, 1, 64)
    x = ctx.encrypt(v)
    # two passes: the error follows the spread, not the mean's square (1e4)
    assert bits(ctx.decrypt(x.var()), np.full(64, v.var())) >= FRESH_BITS - math.log2(100) - 4


def test_batch_statistics(ctx):
    V = rng(21).uniform(-1, 1, (3, 64))
    b = ctx.encrypt_batch(V)
    assert bits(ctx.decrypt(b.mean())[:, 0], V.mean(axis=1)) >= FRESH_BITS - 2
    assert bits(ctx.decrypt(b.var())[:, 0], V.var(axis=1)) >= FRESH_BITS - 4
    w = rng(22).uniform(-1, 1, 64)
    assert bits(ctx.decrypt(b.dot(w))[:, 0], V @ w) >= bound(64)


def test_statistics_errors(ctx):
    with pytest.raises(oboro.InvalidArgument, match="1-D"):
        ctx.encrypt(np.ones((2, 2))).dot(np.ones(4))
    with ctx.manual():
        with pytest.raises(oboro.InvalidArgument, match="automatic mode"):
            ctx.encrypt(np.ones(8)).var()


def test_block_diagonal_copies_apply_one_block_to_packed_vectors(ctx):
    B = rng(23).uniform(-1, 1, (10, 50))
    W = la.PlainMatrix(ctx, B, copies=4)  # blocks padded to 64 x 64
    assert W.shape == (256, 256)
    assert W.diagonal_count(256) == la.PlainMatrix(ctx, B, copies=1).diagonal_count(256)
    V = rng(24).uniform(-1, 1, (4, 50))
    packed = np.zeros((4, 64))
    packed[:, :50] = V
    la.keygen(ctx, W, method="matvec")
    y = ctx.decrypt(W @ ctx.encrypt(packed.ravel())).reshape(4, 64)
    assert bits(y[:, :10], V @ B.T) >= bound(50)
    assert np.max(np.abs(y[:, 10:])) < 1e-5
    # the transpose is the block's: (10 x 50).T padded to 64 x 64, 4 copies
    packed_t = np.zeros((4, 64))
    packed_t[:, :10] = y[:, :10]
    la.keygen(ctx, W.T, method="matvec")
    z = ctx.decrypt(W.T @ ctx.encrypt(packed_t.ravel())).reshape(4, 64)
    assert bits(z[:, :50], (V @ B.T) @ B) >= bound(50) - 4
    with pytest.raises(oboro.InvalidArgument, match="at least 1"):
        la.PlainMatrix(ctx, B, copies=0)
    with pytest.raises(oboro.InvalidArgument, match="do not fit"):
        la.matvec(la.PlainMatrix(ctx, B, copies=64), [ctx.encrypt(np.zeros(2048)), ctx.encrypt(np.zeros(2048))])


def test_a_large_matrix_is_converted_once():
    """A float64 matrix becomes a PlainMatrix (and an encrypted matrix) with one copy of 8 bytes a
    value, not through complex numbers (16 bytes a value, twice): in a process of its own, making a
    PlainMatrix of a 4096 x 4096 matrix (128 MiB) raises the peak resident memory by less than twice
    the matrix (the conversion through complex numbers took five times it)."""
    import subprocess
    import sys

    code = """
import resource, numpy as np, oboro
ctx = oboro.Context(log_n=13, moduli_bits=[60, 40], special_bits=[60])
m = np.ones((4096, 4096)); m[0, 0] = 2.0
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
p = oboro.linalg.PlainMatrix(ctx, m)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024 / m.nbytes)
"""
    grew = float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    assert grew < 2.0, f"the peak memory grew by {grew:.2f} times the matrix's bytes"
