"""Parity of oboro.Ciphertext and oboro.Batch: every operator and method gives, on a ciphertext and on
a one-element batch made of it, the same ciphertext bit for bit (the serialized bytes of the
Ciphertext and of batch[0]), or raises the same exception type. Both run on the CPU and on
device "cuda-emulated" (the CUDA backend's host logic and kernels run by the CPU grid emulator;
ciphertexts stay in host memory, the batch lives on the device and is compared after
batch.to("cpu")), in automatic and in manual mode.

The whole matrix (every operator x every operand kind x several left operands x both modes) runs
on both devices, the emulated one included: at S1 with one-element batches an emulated key switch
takes tens of milliseconds, and the file takes about 15 s on 2 cores. Where a CUDA GPU is present
(oboro.build_info()["cuda_devices"] > 0) the matrix also runs on device "cuda", the real GPU."""

from __future__ import annotations

import contextlib
import operator

import numpy as np
import pytest

import oboro

DEVICES = ["cpu", "cuda-emulated"] + (["cuda"] if oboro.build_info()["cuda_devices"] > 0 else [])
MODES = ["auto", "manual"]


@pytest.fixture(scope="module")
def ctx():
    c = oboro.Context.from_preset("S1")
    c.keygen(rotations=[1, -1, 2], conjugation=True)
    return c


class Pool:
    """The operands of the tests, made once per module: left operands in several states and, for
    each element shape, right operands of every kind. Ciphertexts are host ciphertexts; batches
    are made of them on the device under test."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.cache = {}

    def once(self, key, make):
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def values(self, shape, tag):
        rng = np.random.default_rng([len(shape), *shape, tag])
        return rng.uniform(-1, 1, shape)

    def left(self, which):
        """(the host ciphertext, the element shape) of a left operand; "product" is made in the
        caller's mode by left_operand()."""
        ctx = self.ctx
        shape = {"matrix": (2, 4), "scalar": ()}.get(which, (8,))
        x = self.values(shape, 1)
        make = {
            "fresh": lambda: ctx.encrypt(x),
            "product": lambda: ctx.encrypt(x),
            "complex": lambda: ctx.encrypt(x + 0.5j * self.values(shape, 3)),
            "scale_2^30": lambda: ctx.encrypt(x, scale=2.0**30),
            "level_0": lambda: ctx.encrypt(x, level=0),
            "matrix": lambda: ctx.encrypt(x),
            "scalar": lambda: ctx.encrypt(x),
        }[which]
        return self.once(("left", which), make), shape

    def encrypted(self, shape, level=None):
        return self.once(("y", shape, level), lambda: self.ctx.encrypt(self.values(shape, 2), level=level))

    def other_keys(self, shape):
        """A ciphertext of the same parameters under other keys."""

        def make():
            other = oboro.Context.from_preset("S1")
            other.keygen(rotations=[1], conjugation=False)
            return other.encrypt(self.values(shape, 2))

        return self.once(("other keys", shape), make)


# The left operand: a fresh ciphertext of 8 values; the product of two (automatic mode relinearizes
# and rescales it, manual mode leaves 3 polynomials at the squared scale); complex values; a scale
# other than the standard one; the lowest level; a 2-D and a 0-D element shape.
LEFT = ["fresh", "product", "complex", "scale_2^30", "level_0", "matrix", "scalar"]


@pytest.fixture(scope="module")
def pool(ctx):
    return Pool(ctx)


def mode_scope(ctx, mode):
    return ctx.manual() if mode == "manual" else contextlib.nullcontext()


def device_name(device):
    """What Batch.device reports for a batch made on `device` ("cuda" is the first GPU, "cuda:0")."""
    return "cuda:0" if device == "cuda" else device


def batch_of(ct, device):
    b = oboro.Batch.from_ciphertexts([ct], device=device)
    assert b.device == device_name(device) and len(b) == 1
    return b


def left_operand(pool, which, batch, device):
    ct, shape = pool.left(which)
    a = batch_of(ct, device) if batch else ct
    if which == "product":
        y = pool.encrypted(shape)
        return a * (batch_of(y, device) if batch else y)  # in the caller's mode
    return a


# ---- outcomes ---------------------------------------------------------------------------------


def element_of(result, device):
    """The Ciphertext a batch result holds (after a move to the host)."""
    assert isinstance(result, oboro.Batch), type(result)
    assert result.device == device_name(device)
    assert len(result) == 1
    return result.to("cpu")[0]


def describe(ct):
    """What must be identical: the bytes, and the metadata the Python objects carry."""
    assert isinstance(ct, oboro.Ciphertext), type(ct)
    return (ct.serialize(), ct.shape, ct.dtype, ct.level, ct.scale, ct.poly_count)


def outcome(fn, to_ciphertexts):
    """("ok", what the result holds) or ("raises", the exception type)."""
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return ("raises", type(e))
    return ("ok", to_ciphertexts(result))


def assert_parity(ctx, mode, device, on_ciphertext, on_batch, describe_ct=None, describe_batch=None):
    """Runs both sides in `mode` and asserts the same outcome; returns the Ciphertext's."""
    describe_ct = describe_ct or describe
    describe_batch = describe_batch or (lambda b: describe(element_of(b, device)))
    with mode_scope(ctx, mode):
        want = outcome(on_ciphertext, describe_ct)
        got = outcome(on_batch, describe_batch)
    assert got[0] == want[0], f"Ciphertext: {want}, Batch: {got}"
    if want[0] == "raises":
        assert got[1] is want[1]
    else:
        assert got[1] == want[1]
    return want


# ---- operands ---------------------------------------------------------------------------------

# Every kind of right operand, of the left operand's element shape. For a Batch the encrypted
# kinds are one-element batches on the batch's device, and "array_rows" is an array of the
# batch's shape (1, *shape), one row per element (the Ciphertext gets the row itself). "self" is
# the left operand itself (a + a, a += a).
OPERAND_KINDS = [
    "self",
    "encrypted",
    "encrypted_low",
    "encrypted_other_shape",
    "encrypted_other_keys",
    "encrypted_complex",
    "plaintext",
    "plaintext_low",
    "plaintext_complex",
    "plaintext_scale_2^30",
    "int",
    "negative_int",
    "zero",
    "huge_int",
    "bool",
    "float",
    "integral_float",
    "complex",
    "numpy_int",
    "numpy_float",
    "numpy_complex",
    "array",
    "complex_array",
    "array_with_zero",
    "list",
    "array_rows",
]


def operand(kind, pool, shape, batch, device):
    """The right operand of `kind` for a Ciphertext (batch=False) or a Batch (batch=True)."""
    ctx = pool.ctx
    y = pool.values(shape, 2)
    if kind == "self":
        return SELF
    encrypted = {
        "encrypted": lambda: pool.encrypted(shape),
        "encrypted_low": lambda: pool.encrypted(shape, level=ctx.max_level - 1),
        "encrypted_other_shape": lambda: pool.encrypted((3,)),
        "encrypted_other_keys": lambda: pool.other_keys(shape),
        "encrypted_complex": lambda: pool.once(("y complex", shape), lambda: ctx.encrypt(y + 1j)),
    }
    if kind in encrypted:
        ct = encrypted[kind]()
        return batch_of(ct, device) if batch else ct
    if kind == "plaintext":
        return pool.once(("plaintext", shape), lambda: ctx.encode(y))
    plaintexts = {
        "plaintext_low": lambda: ctx.encode(y, level=0),
        "plaintext_complex": lambda: ctx.encode(y - 0.5j),
        "plaintext_scale_2^30": lambda: ctx.encode(y, scale=2.0**30),
    }
    if kind in plaintexts:
        return pool.once((kind, shape), plaintexts[kind])
    scalars = {
        "int": 3,
        "negative_int": -2,
        "zero": 0,
        "huge_int": 2**70,
        "bool": True,
        "float": 0.7,
        "integral_float": 2.0,
        "complex": 0.5 - 0.25j,
        "numpy_int": np.int64(5),
        "numpy_float": np.float64(-0.3),
        "numpy_complex": np.complex128(0.25 + 1j),
    }
    if kind in scalars:
        return scalars[kind]
    if kind == "array":
        return y
    if kind == "complex_array":
        return y + 0.5j * pool.values(shape, 4)
    if kind == "array_with_zero":
        z = np.array(y, copy=True)
        z.flat[0] = 0.0
        return z
    if kind == "list":
        return np.asarray(y).tolist()
    if kind == "array_rows":
        return np.asarray(y).reshape((1,) + shape) if batch else y
    raise AssertionError(kind)


SELF = object()  # the right operand "self": the left operand itself


def in_place(op):
    def run(a, b):
        a = a.copy()
        before = a
        a = op(a, a if b is SELF else b)
        return (a, a is before)

    return run


def binary(op):
    return lambda a, b: op(a, a if b is SELF else b)


BINARY = {
    "add": binary(operator.add),
    "sub": binary(operator.sub),
    "mul": binary(operator.mul),
    "truediv": binary(operator.truediv),
    "radd": binary(lambda a, b: b + a),
    "rsub": binary(lambda a, b: b - a),
    "rmul": binary(lambda a, b: b * a),
    "rtruediv": binary(lambda a, b: b / a),
    "iadd": in_place(operator.iadd),
    "isub": in_place(operator.isub),
    "imul": in_place(operator.imul),
    "itruediv": in_place(operator.itruediv),
}


def described_pair(describe_one):
    """describe() of an operator result, which for the in-place forms carries whether the object
    was updated in place."""

    def run(result):
        if isinstance(result, tuple):
            r, same_object = result
            return (describe_one(r), same_object)
        return describe_one(result)

    return run


@pytest.mark.parametrize("kind", OPERAND_KINDS)
@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("left", LEFT)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_binary_operator_parity(ctx, pool, device, mode, left, op, kind):
    fn = BINARY[op]
    shape = pool.left(left)[1]

    def on(batch):
        return lambda: fn(left_operand(pool, left, batch, device), operand(kind, pool, shape, batch, device))

    assert_parity(
        ctx,
        mode,
        device,
        on(False),
        on(True),
        described_pair(describe),
        described_pair(lambda b: describe(element_of(b, device))),
    )


# The operations that must succeed (the others raise the same error for both): a guard against a
# parity test that passes because everything raises.
@pytest.mark.parametrize("device", DEVICES)
def test_parity_cases_do_compute(ctx, pool, device):
    ct = pool.left("fresh")[0]
    y = pool.encrypted((8,))
    b, by = batch_of(ct, device), batch_of(y, device)
    for mode in MODES:
        for fn in (operator.add, operator.sub, operator.mul):
            want = assert_parity(ctx, mode, device, lambda: fn(ct, y), lambda: fn(b, by))
            assert want[0] == "ok"
        for c in (3, 0.7, 2.0, 0.5 - 0.25j, pool.values((8,), 2)):
            for fn in (operator.add, operator.sub, operator.mul, operator.truediv):
                want = assert_parity(ctx, mode, device, lambda: fn(ct, c), lambda: fn(b, c))
                assert want[0] == "ok", (mode, fn, c)


@pytest.mark.parametrize("left", LEFT)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_negation_parity(ctx, pool, device, mode, left):
    assert_parity(
        ctx,
        mode,
        device,
        lambda: -left_operand(pool, left, False, device),
        lambda: -left_operand(pool, left, True, device),
    )


# ---- methods ----------------------------------------------------------------------------------

METHODS = {
    "rotate_1": lambda a: a.rotate(1),
    "rotate_-1": lambda a: a.rotate(-1),
    "rotate_2": lambda a: a.rotate(2),
    "rotate_0": lambda a: a.rotate(0),
    "rotate_3_composed": lambda a: a.rotate(3),  # no key: composed in automatic mode
    "rotate_slots_plus_1": lambda a: a.rotate(a.slots + 1),
    "rotate_numpy_int": lambda a: a.rotate(np.int64(1)),
    "conj": lambda a: a.conj(),
    "rescale": lambda a: a.rescale(),
    "relinearize": lambda a: a.relinearize(),
    "drop_to_level_0": lambda a: a.drop_to_level(0),
    "drop_to_level_same": lambda a: a.drop_to_level(a.level),
    "drop_to_level_above": lambda a: a.drop_to_level(a.level + 1),
    "sum": lambda a: a.sum(),
    "sum_stride_doubling": lambda a: a.sum(stride=1, count=4, strategy="doubling"),
    "sum_stride_hoisted": lambda a: a.sum(stride=1, count=2, strategy="hoisted"),
    "sum_block": lambda a: a.sum(block=2),
    "copy": lambda a: a.copy(),
    "pos": lambda a: +a,
}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("left", LEFT)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_method_parity(ctx, pool, device, mode, left, method):
    fn = METHODS[method]
    assert_parity(
        ctx,
        mode,
        device,
        lambda: fn(left_operand(pool, left, False, device)),
        lambda: fn(left_operand(pool, left, True, device)),
    )


@pytest.mark.parametrize("steps", [[1], [1, 0, -1, 2], [3, 1, 5], [0], []])
@pytest.mark.parametrize("left", LEFT)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_rotate_many_parity(ctx, pool, device, mode, left, steps):
    def each(results, to_ct):
        assert isinstance(results, list) and len(results) == len(steps)
        return [describe(to_ct(r)) for r in results]

    assert_parity(
        ctx,
        mode,
        device,
        lambda: left_operand(pool, left, False, device).rotate_many(steps),
        lambda: left_operand(pool, left, True, device).rotate_many(steps),
        lambda r: each(r, lambda c: c),
        lambda r: each(r, lambda b: element_of(b, device)),
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
def test_batch_rotation_by_a_step_list_matches_ciphertext(ctx, pool, device, mode):
    """Batch.rotate([k]) (one step per element) is Ciphertext.rotate(k)."""
    ct = pool.left("fresh")[0]
    for k in (1, -1, 3, 0):
        assert_parity(ctx, mode, device, lambda: ct.rotate(k), lambda: batch_of(ct, device).rotate([k]))


@pytest.mark.parametrize("device", DEVICES)
def test_a_manual_product_chain_matches(ctx, pool, device):
    """relinearize and rescale spelled out in manual mode, then a rotation, a sum and a product."""
    ct, y = pool.left("fresh")[0], pool.encrypted((8,))

    def chain(a, o):
        p = (a * o).relinearize().rescale()
        return (p + p.rotate(1)) * 2

    want = assert_parity(
        ctx, "manual", device, lambda: chain(ct, y), lambda: chain(batch_of(ct, device), batch_of(y, device))
    )
    assert want[0] == "ok"


# ---- the emulated device with batches of several elements -------------------------------------


def test_emulated_device_batches_match_cpu(ctx):
    """Batches made on "cuda-emulated" at different times share one queue (they combine), and a
    chain of operators on them gives the CPU's batch bit for bit."""
    rng = np.random.default_rng(7)
    X, Y = rng.uniform(-1, 1, (3, 8)), rng.uniform(-1, 1, (3, 8))
    cx, cy = ctx.encrypt_batch(X), ctx.encrypt_batch(Y)
    ex, ey = cx.to("cuda-emulated"), ctx.encrypt_batch(Y, device="cuda-emulated")
    assert ex.device == ey.device == "cuda-emulated"
    ey = cy.to("cuda-emulated")  # the same ciphertexts as cy (encryption is randomized)

    def chain(a, b):
        return ((a * b + 2.0 * a).rotate([1, 0, 2]) - Y).sum(stride=1, count=2, strategy="doubling")

    got, want = chain(ex, ey), chain(cx, cy)
    assert got.device == "cuda-emulated"
    assert got.to("cpu").serialize() == want.serialize()
    np.testing.assert_array_equal(ctx.decrypt(got), ctx.decrypt(want))
