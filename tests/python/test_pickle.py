"""Pickling through the checked serialization format: Context (public part only), Ciphertext,
Plaintext, Batch and EncryptedMatrix; re-attachment to the context with the same keys, refusal
without one or with other keys; copy and deepcopy; and a multiprocessing pool that receives the
context once and then ciphertexts, and sends results back to the client's context."""

import copy
import multiprocessing as mp
import pickle

import numpy as np
import pytest

import oboro
import oboro.linalg as la


@pytest.fixture(scope="module")
def ctx():
    c = oboro.Context.from_preset("S1")
    c.keygen(rotations=[1])
    return c


def test_context_pickles_its_public_part_only(ctx):
    c2 = pickle.loads(pickle.dumps(ctx))
    assert c2.log_n == ctx.log_n and c2.max_level == ctx.max_level
    with pytest.raises(oboro.MissingKey):
        c2.decrypt(ctx.encrypt([1.0]))
    # what it carries is what public() holds: it encrypts and evaluates for the owner
    ct = c2.encrypt([1.0, 2.0]).rotate(1)
    assert np.allclose(ctx.decrypt(pickle.loads(pickle.dumps(ct))), [2.0, 1.0], atol=1e-5)  # cyclic over its 2 slots
    # the secret key only when asked for, explicitly
    full = oboro.Context.deserialize(pickle.loads(pickle.dumps(ctx.serialize(secret_key=True))))
    assert np.allclose(full.decrypt(ctx.encrypt([3.0])), 3.0, atol=1e-5)
    assert copy.copy(ctx) is ctx and copy.deepcopy(ctx) is ctx


def test_encrypted_objects_round_trip(ctx):
    x = np.array([0.5, -1.5, 2.25])
    ct = ctx.encrypt(x)
    back = pickle.loads(pickle.dumps(ct))
    assert back.shape == ct.shape and back.level == ct.level and back.scale == ct.scale
    assert np.array_equal(ctx.decrypt(back), ctx.decrypt(ct))
    pt = ctx.encode(x)
    assert pickle.loads(pickle.dumps(pt)).shape == (3,)
    b = ctx.encrypt_batch(np.ones((3, 4)))
    assert np.array_equal(ctx.decrypt(pickle.loads(pickle.dumps(b))), ctx.decrypt(b))
    m = la.encrypt_matrix(ctx, np.eye(4), method="jiang")
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.shape == (4, 4) and np.array_equal(ctx.decrypt(m2), ctx.decrypt(m))
    assert np.array_equal(ctx.decrypt(copy.deepcopy(ct)), ctx.decrypt(ct))


def test_refused_without_its_context_or_with_other_keys(ctx):
    other = oboro.Context.from_preset("S1")
    other.keygen()
    data = pickle.dumps(other.encrypt([1.0]))
    del other  # the only context with those keys is gone
    import gc

    gc.collect()
    with pytest.raises(oboro.SerializationError, match="unpickle .*its context first"):
        pickle.loads(data)
    # corrupted bytes are refused by the checked format, not loaded
    good = bytearray(pickle.dumps(ctx.encrypt([1.0])))
    good[len(good) // 2] ^= 0xFF
    with pytest.raises((oboro.SerializationError, pickle.UnpicklingError)):
        pickle.loads(bytes(good))


def _pool_init(data):
    global WORKER_CTX
    WORKER_CTX = pickle.loads(data)  # public part: no secret key in the workers


def _pool_work(ct):
    return ct * 2 + 1


def test_process_pool_computes_on_ciphertexts(ctx):
    xs = [np.arange(4.0) + i for i in range(4)]
    with mp.get_context("spawn").Pool(2, initializer=_pool_init, initargs=(pickle.dumps(ctx),)) as pool:
        results = pool.map(_pool_work, [ctx.encrypt(x) for x in xs])
    for x, r in zip(xs, results):
        assert np.allclose(ctx.decrypt(r), 2 * x + 1, atol=1e-4)
