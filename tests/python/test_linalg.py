"""oboro.linalg: encrypted matrix products against numpy.matmul with explicit error bounds, on S2
(paper 003's parameters: max abs error <= 1e-4) and a second, smaller set; every error case."""

from __future__ import annotations

import numpy as np
import pytest

import oboro
from oboro import linalg

S2_BOUND = 1e-4  # paper 003 Table 7 reports ~4e-5 at d = 16
SMALL_BOUND = 1e-2  # N = 2^13 with a 30-bit scale: ~2^-30 per value, times d and the key-switch noise

METHODS = ("jiang", "3d")


def uniform(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape)


def max_err(got, want) -> float:
    assert got.shape == want.shape
    return float(np.max(np.abs(got - want)))


@pytest.fixture(scope="module")
def s2():
    """S2 with the keys of both methods for d = 4, 8, 16 (through the helper under test)."""
    ctx = oboro.Context.from_preset("S2")
    for method in METHODS:
        for d in (4, 8, 16):
            linalg.keygen(ctx, (d, d, d), method)
    return ctx


@pytest.fixture(scope="module")
def small():
    """N = 2^13 (4096 slots: the 3-D method up to d = 16), 3 levels of 30 bits."""
    ctx = oboro.Context(13, [50, 30, 30, 30], [50], scale_bits=30)
    for method in METHODS:
        linalg.keygen(ctx, (8, 8), method)
    return ctx


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("d", [4, 8, 16])
def test_square_products_match_numpy_at_s2(s2, method, d):
    a, b = uniform((d, d), d), uniform((d, d), 100 + d)
    ea = linalg.encrypt_matrix(s2, a, method=method)
    eb = linalg.encrypt_matrix(s2, b, method=method)
    assert (ea.shape, ea.method, ea.d) == ((d, d), method, d)
    assert repr(ea) == f"<oboro.EncryptedMatrix shape=({d}, {d}) method={method} d={d} grid=(1, 1) level=3>"
    ec = linalg.matmul(ea, eb)
    assert ec.shape == (d, d) and ec.level == ea.level - 3
    assert max_err(s2.decrypt(ec), a @ b) <= S2_BOUND


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shapes", [((3, 5), (5, 7)), ((16, 4), (4, 9)), ((1, 8), (8, 1)), ((6, 2), (2, 6))])
def test_rectangular_products_come_back_unpadded(s2, method, shapes):
    a, b = uniform(shapes[0], 1), uniform(shapes[1], 2)
    d = 16 if max(*shapes[0], *shapes[1]) > 8 else 8  # one padding for both operands
    ea = linalg.encrypt_matrix(s2, a, method=method, d=d)
    eb = linalg.encrypt_matrix(s2, b, method=method, d=d)
    c = s2.decrypt(ea @ eb)
    assert c.shape == (a.shape[0], b.shape[1])
    assert max_err(c, a @ b) <= S2_BOUND


@pytest.mark.parametrize("method", METHODS)
def test_second_parameter_set(small, method):
    a, b = uniform((8, 8), 3), uniform((8, 8), 4)
    ec = linalg.encrypt_matrix(small, a, method=method) @ linalg.encrypt_matrix(small, b, method=method)
    assert max_err(small.decrypt(ec), a @ b) <= SMALL_BOUND


def test_operator_and_function_agree_and_auto_picks_3d(s2):
    a, b = uniform((8, 8), 5), uniform((8, 8), 6)
    ea, eb = linalg.encrypt_matrix(s2, a), linalg.encrypt_matrix(s2, b)
    assert ea.method == "3d"  # d^3 = 512 <= 8192 slots
    assert max_err(s2.decrypt(ea @ eb), s2.decrypt(linalg.matmul(ea, eb))) <= 2 * S2_BOUND
    # d = 32: d^3 = 32768 > 8192 slots, d^2 fits: Jiang et al.
    assert linalg.encrypt_matrix(s2, np.zeros((32, 32))).method == "jiang"


def test_special_values(s2):
    """Zero, identity and integer matrices (exact in the clear) come back within the bound."""
    eye, zero = np.eye(8), np.zeros((8, 8))
    ints = np.arange(64, dtype=float).reshape(8, 8) / 64.0
    for method in METHODS:
        enc = lambda m: linalg.encrypt_matrix(s2, m, method=method)  # noqa: E731
        assert max_err(s2.decrypt(enc(eye) @ enc(ints)), ints) <= S2_BOUND
        assert max_err(s2.decrypt(enc(ints) @ enc(zero)), zero) <= S2_BOUND


def test_rotation_steps_are_exactly_what_a_method_needs(s2):
    steps16 = linalg.rotation_steps(s2, (16, 16), "3d")
    assert steps16 == sorted(set(steps16)) and 0 not in steps16
    # the 3-D method's hoisted sums use a few more keys than 5 log d, far fewer than d^2
    assert 20 <= len(steps16) < 80
    # a fresh context with only those keys multiplies; with one step fewer it refuses, naming it
    for method in METHODS:
        ctx = oboro.Context.from_preset("S2")
        steps = linalg.rotation_steps(ctx, (4, 4), method)
        ctx.keygen(rotations=steps[1:])
        ea = linalg.encrypt_matrix(ctx, np.eye(4), method=method)
        with pytest.raises(oboro.MissingKey, match=rf"rotation.* {steps[0]}\b.*rotation_steps"):
            ea @ ea
        ctx.keygen(rotations=[steps[0]])
        assert max_err(ctx.decrypt(ea @ ea), np.eye(4)) <= S2_BOUND


# ---- block products ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes,d,base",
    [
        (((32, 32), (32, 32)), 8, "3d"),  # a 4 x 4 grid of 8 x 8 blocks, 3-D products
        (((20, 12), (12, 28)), 8, "3d"),  # rectangular, padded blocks
        (((24, 40), (40, 8)), 32, "jiang"),  # d^3 > slots: Jiang et al. per block
    ],
)
def test_block_products_match_numpy(s2, shapes, d, base):
    a, b = uniform(shapes[0], 11), uniform(shapes[1], 12)
    linalg.keygen(s2, a.shape + b.shape, "block", d=d)
    ea = linalg.encrypt_matrix(s2, a, method="block", d=d)
    eb = linalg.encrypt_matrix(s2, b, method="block", d=d)
    assert (ea.method, ea.d, ea.base) == ("block", d, base)
    assert ea.grid == (-(-a.shape[0] // d), -(-a.shape[1] // d))
    ec = ea @ eb
    assert ec.grid == (ea.grid[0], eb.grid[1]) and ec.level == ea.level - 3
    assert max_err(s2.decrypt(ec), a @ b) <= S2_BOUND


def test_block_default_size_and_auto(s2):
    # d^2 > slots for d = 128: "auto" cuts into the largest blocks with d^2 <= slots (64 x 64)
    e = linalg.encrypt_matrix(s2, np.zeros((100, 3)))
    assert (e.method, e.d, e.grid, e.base) == ("block", 64, (2, 1), "jiang")
    # no larger than the matrix needs
    assert linalg.encrypt_matrix(s2, np.zeros((5, 3)), method="block").d == 8
    with pytest.raises(oboro.InvalidArgument, match=r"d\^3"):
        linalg.rotation_steps(s2, (32, 32), "3d", d=32)


# ---- errors ---------------------------------------------------------------------------------------


def test_shape_mismatch(s2):
    ea = linalg.encrypt_matrix(s2, np.ones((4, 3)), method="3d")
    eb = linalg.encrypt_matrix(s2, np.ones((4, 3)), method="3d")
    with pytest.raises(oboro.InvalidArgument, match=r"shapes \(4, 3\) and \(4, 3\) do not match"):
        ea @ eb


def test_operands_padded_differently_or_for_other_methods(s2):
    e4 = linalg.encrypt_matrix(s2, np.ones((4, 4)), method="3d")
    e8 = linalg.encrypt_matrix(s2, np.ones((4, 8)), method="3d")
    with pytest.raises(oboro.InvalidArgument, match=r"padded to d = 4 .* d = 8.*d=8"):
        e4 @ e8
    ej = linalg.encrypt_matrix(s2, np.ones((4, 4)), method="jiang")
    with pytest.raises(oboro.InvalidArgument, match="'3d' and operand 'B' for 'jiang'"):
        e4 @ ej


def test_d_too_large_for_a_method(s2):
    with pytest.raises(oboro.InvalidArgument, match=r"d\^3 = 32768 slots .* 8192"):
        linalg.encrypt_matrix(s2, np.ones((32, 32)), method="3d")
    with pytest.raises(oboro.InvalidArgument, match=r"d\^2 = 16384 slots .* 8192"):
        linalg.encrypt_matrix(s2, np.ones((128, 128)), method="jiang")
    with pytest.raises(oboro.InvalidArgument, match=r"d\^3"):
        linalg.rotation_steps(s2, (32, 32), "3d")


def test_bad_arguments(s2):
    with pytest.raises(oboro.InvalidArgument, match="2-D matrix"):
        linalg.encrypt_matrix(s2, np.ones(4))
    with pytest.raises(oboro.InvalidArgument, match="complex"):
        linalg.encrypt_matrix(s2, np.ones((2, 2), dtype=complex))
    with pytest.raises(oboro.InvalidArgument, match="method 'strassen'"):
        linalg.encrypt_matrix(s2, np.ones((2, 2)), method="strassen")
    with pytest.raises(oboro.InvalidArgument, match="power of two"):
        linalg.encrypt_matrix(s2, np.ones((2, 2)), d=6)
    with pytest.raises(oboro.InvalidArgument, match="smaller than the matrix dimension 5"):
        linalg.encrypt_matrix(s2, np.ones((5, 2)), d=4)
    with pytest.raises(oboro.InvalidArgument, match="level 9"):
        linalg.encrypt_matrix(s2, np.ones((2, 2)), level=9)


def test_different_contexts(s2):
    other = oboro.Context.from_preset("S2")
    linalg.keygen(other, (4, 4), "3d")
    ea = linalg.encrypt_matrix(s2, np.ones((4, 4)), method="3d")
    eb = linalg.encrypt_matrix(other, np.ones((4, 4)), method="3d")
    with pytest.raises(oboro.ContextMismatch, match="different contexts or keys"):
        ea @ eb
    with pytest.raises(oboro.ContextMismatch):
        other.decrypt(ea)


def test_bands_join_back_and_misfits_are_refused(s2):
    """EncryptedMatrix.band cuts a block matrix into parts of whole blocks (the tiles of a
    distributed product) and EncryptedMatrix.join puts them back, word for word."""
    A = uniform((20, 16), 3)
    eA = linalg.encrypt_matrix(s2, A, method="block", d=8)
    assert eA.grid == (3, 2) and eA.shape == (20, 16)
    parts = [[eA.band((r0, r1), (c0, c1)) for c0, c1 in ((0, 1), (1, 2))] for r0, r1 in ((0, 2), (2, 3))]
    assert parts[1][0].shape == (4, 8) and parts[0][1].shape == (16, 8) and parts[1][1].grid == (1, 1)
    assert linalg.EncryptedMatrix.join(parts).serialize() == eA.serialize()
    assert max_err(s2.decrypt(eA.band((2, 3), (0, 2))), A[16:]) < 1e-6
    assert max_err(s2.decrypt(eA.band((0, 3), (1, 2))), A[:, 8:]) < 1e-6
    for rows, cols in (((0, 0), (0, 1)), ((2, 1), (0, 1)), ((0, 4), (0, 1)), ((0, 1), (0, 3))):
        with pytest.raises(oboro.InvalidArgument, match="range of block indices"):
            eA.band(rows, cols)
    join = linalg.EncryptedMatrix.join
    with pytest.raises(oboro.InvalidArgument, match="no tiles"):
        join([])
    with pytest.raises(oboro.InvalidArgument, match="partial block"):  # the bottom band above the top one
        join([[parts[1][0]], [parts[0][0]]])
    with pytest.raises(oboro.InvalidArgument, match="tile row 1 has 1 tiles"):
        join([parts[0], parts[1][:1]])
    with pytest.raises(oboro.InvalidArgument, match="rows in"):  # a row of tiles of different heights
        join([[parts[0][0], parts[1][1]]])
    with pytest.raises(oboro.LevelMismatch, match="level"):
        join([[parts[0][0], linalg.encrypt_matrix(s2, A[:16, 8:], method="block", d=8, level=1)]])
    with pytest.raises(oboro.InvalidArgument, match="d = 4"):
        join([[parts[0][0], linalg.encrypt_matrix(s2, A[:16, 8:], method="block", d=4)]])
    other = oboro.Context.from_preset("S2")
    other.keygen(rotations=[1])
    with pytest.raises(oboro.ContextMismatch, match="tile \\(0, 1\\)"):
        join([[parts[0][0], linalg.encrypt_matrix(other, A[:16, 8:], method="block", d=8)]])
    one = linalg.encrypt_matrix(s2, A[:8, :8], method="3d")
    assert join([[one]]).serialize() == one.serialize() and one.band((0, 1), (0, 1)).serialize() == one.serialize()
    with pytest.raises(oboro.InvalidArgument, match="only 'block' matrices"):
        join([[one, one]])
    with pytest.raises(oboro.InvalidArgument, match="a tile is None"):
        join([[parts[0][0], None]])
    with pytest.raises(TypeError):
        join([[parts[0][0], A]])


def test_too_few_levels():
    ctx = oboro.Context.from_preset("S1")  # one level; the products consume three
    linalg.keygen(ctx, (4, 4), "3d")
    ea = linalg.encrypt_matrix(ctx, np.ones((4, 4)), method="3d")
    with pytest.raises(oboro.LevelMismatch, match="needs 3 levels"):
        ea @ ea
    s2_ctx = linalg.keygen(oboro.Context.from_preset("S2"), (4, 4), "jiang")
    ea2 = linalg.encrypt_matrix(s2_ctx, np.ones((4, 4)), method="jiang", level=2)
    with pytest.raises(oboro.LevelMismatch, match="needs 3 levels"):
        ea2 @ ea2


def test_no_relinearization_key():
    ctx = oboro.Context.from_preset("S2").keygen(rotations=[], relin=False)
    ctx.keygen(rotations=linalg.rotation_steps(ctx, (4, 4), "3d"), relin=False)
    ea = linalg.encrypt_matrix(ctx, np.ones((4, 4)), method="3d")
    with pytest.raises(oboro.MissingKey, match="relinearization"):
        ea @ ea


def test_encrypt_needs_keys():
    with pytest.raises(oboro.MissingKey, match="keygen"):
        linalg.encrypt_matrix(oboro.Context.from_preset("S2"), np.ones((2, 2)))
