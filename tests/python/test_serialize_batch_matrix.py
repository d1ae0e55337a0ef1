"""Serialization of oboro.Batch and oboro.linalg.EncryptedMatrix: bit-exact round trips through
bytes and files (the loaded object decrypts to exactly the original's values and computes like
it), seeded matrix blocks, and SerializationError for truncated, corrupted, wrong-kind,
wrong-context, wrong-key and oversized data. Their mutations are in test_serialize.py's fuzzing
loop; the C++ suite covers every field (test_io_batch_matrix.cpp, test_io_fuzz.cpp)."""

from __future__ import annotations

import pathlib
import struct

import numpy as np
import pytest

import oboro
from oboro import linalg
from test_serialize import reseal

HEADER = 32


@pytest.fixture(scope="module")
def client():
    ctx = oboro.Context.from_preset("S2").keygen(rotations=[1, 2])
    linalg.keygen(ctx, (4, 4, 4), "3d")
    linalg.keygen(ctx, (8, 8), "jiang")
    return ctx


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(11).uniform(-1, 1, (4, 2, 3))


def test_batch_round_trip_is_bit_exact_and_computes(client, X, tmp_path: pathlib.Path):
    b = client.encrypt_batch(X + 0.5j)
    b2 = (b * 2.0).rotate(1)  # a lower level, a rescaled scale, not fresh
    for original in (b, b2):
        data = original.serialize()
        assert oboro.serialized_info(data)["type"] == "ciphertext batch"
        assert oboro.serialized_info(data)["format_version"] == 2
        back = oboro.Batch.deserialize(client, data)
        assert (back.shape, back.dtype, back.level, back.scale, back.slots) == (
            original.shape, original.dtype, original.level, original.scale, original.slots)
        np.testing.assert_array_equal(client.decrypt(back), client.decrypt(original))
        np.testing.assert_array_equal(client.decrypt(back.sum(block=2)), client.decrypt(original.sum(block=2)))
    path = tmp_path / "batch.oboro"
    b.save(path)
    np.testing.assert_array_equal(client.decrypt(oboro.Batch.load(client, str(path))), client.decrypt(b))
    # on a server that holds only the public keys
    server = oboro.Context.deserialize(client.serialize())
    on_server = oboro.Batch.deserialize(server, b.serialize()) * 3
    np.testing.assert_array_equal(client.decrypt(oboro.Batch.deserialize(client, on_server.serialize())),
                                  client.decrypt(b * 3))


def test_fresh_batches_are_seeded(client, X):
    b = client.encrypt_batch(X)  # secret-key encryptions: each element keeps its seed
    seeded, full = b.serialize(), b.serialize(compress=False)
    assert len(seeded) < 0.51 * len(full)
    for data in (seeded, full):
        np.testing.assert_array_equal(client.decrypt(oboro.Batch.deserialize(client, data)), client.decrypt(b))
    assert len(oboro.Batch.deserialize(client, seeded).serialize()) == len(seeded)  # still seeded after loading
    assert len(oboro.Batch.from_ciphertexts(b.to_ciphertexts()).serialize()) == len(seeded)  # seeds travel along
    assert len((b + 1.0).serialize()) == len(full)  # a result has no seeds
    server = oboro.Context.deserialize(client.serialize())  # public-key encryptions have no uniform half
    assert len(server.encrypt_batch(X).serialize()) == len(full)


@pytest.mark.parametrize("method,shape,d", [("3d", (3, 4), None), ("jiang", (5, 8), None), ("block", (6, 5), 4)])
def test_matrix_round_trip_keeps_layout_and_products(client, method, shape, d, tmp_path: pathlib.Path):
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 1, shape)
    B = rng.uniform(-1, 1, (shape[1], shape[0]))
    if method == "block":
        linalg.keygen(client, A.shape + B.shape, method, d)
    eA = linalg.encrypt_matrix(client, A, method=method, d=d)
    eB = linalg.encrypt_matrix(client, B, method=method, d=d)
    seeded, full = eA.serialize(), eA.serialize(compress=False)
    assert len(seeded) < 0.52 * len(full)  # fresh blocks keep their seeds
    assert oboro.serialized_info(seeded)["type"] == "encrypted matrix"
    for data in (seeded, full):
        back = linalg.EncryptedMatrix.deserialize(client, data)
        assert (back.shape, back.method, back.d, back.grid, back.base, back.level) == (
            eA.shape, eA.method, eA.d, eA.grid, eA.base, eA.level)
        np.testing.assert_array_equal(client.decrypt(back), client.decrypt(eA))
    product = linalg.EncryptedMatrix.deserialize(client, (eA @ eB).serialize())
    np.testing.assert_array_equal(client.decrypt(product), client.decrypt(eA @ eB))
    assert np.max(np.abs(client.decrypt(product) - A @ B)) < 1e-4
    path = tmp_path / "m.oboro"
    eA.save(path, compress=False)
    np.testing.assert_array_equal(client.decrypt(linalg.EncryptedMatrix.load(client, path)), client.decrypt(eA))


def test_bad_data(client, X):
    b = client.encrypt_batch(X)
    m = linalg.encrypt_matrix(client, np.ones((3, 3)), method="3d")
    bdata, mdata = b.serialize(), m.serialize()
    # truncated and corrupted
    for cut in (0, 31, 100, -9):
        with pytest.raises(oboro.SerializationError, match="truncated"):
            oboro.Batch.deserialize(client, bdata[:cut])
        with pytest.raises(oboro.SerializationError, match="truncated"):
            linalg.EncryptedMatrix.deserialize(client, mdata[:cut])
    flipped = bytearray(bdata)
    flipped[300] ^= 1
    with pytest.raises(oboro.SerializationError, match="checksum"):
        oboro.Batch.deserialize(client, bytes(flipped))
    # wrong kind, both ways
    with pytest.raises(oboro.SerializationError, match="not a ciphertext batch"):
        oboro.Batch.deserialize(client, b[0].serialize())
    with pytest.raises(oboro.SerializationError, match="not a ciphertext"):
        oboro.Ciphertext.deserialize(client, bdata)
    with pytest.raises(oboro.SerializationError, match="not a encrypted matrix"):
        linalg.EncryptedMatrix.deserialize(client, bdata)
    # wrong context: other parameters, other keys
    other_params = oboro.Context.from_preset("S1").keygen(rotations=[])
    other_keys = oboro.Context.from_preset("S2").keygen(rotations=[])
    for ctx, msg in ((other_params, "other parameters"), (other_keys, "other keys")):
        with pytest.raises(oboro.SerializationError, match=msg):
            oboro.Batch.deserialize(ctx, bdata)
        with pytest.raises(oboro.SerializationError, match=msg):
            linalg.EncryptedMatrix.deserialize(ctx, mdata)
    # oversized counts (re-sealed, so that the field checks are reached)
    big = bytearray(bdata)
    struct.pack_into("<Q", big, HEADER, 1 << 40)
    with pytest.raises(oboro.SerializationError, match="elements announced"):
        oboro.Batch.deserialize(client, reseal(big))
    grid = bytearray(mdata)
    struct.pack_into("<QQQII", grid, HEADER + 1, 1 << 22, 4, 4, 1 << 20, 1)
    grid[HEADER] = 2  # 'block': a grid of 2^20 blocks in a few kilobytes
    with pytest.raises(oboro.SerializationError, match="blocks announced"):
        linalg.EncryptedMatrix.deserialize(client, reseal(grid))
    # a layout the parameters cannot run: '3d' with d^3 > slots
    cube = bytearray(mdata)
    struct.pack_into("<QQQ", cube, HEADER + 1, 3, 3, 64)
    with pytest.raises(oboro.SerializationError, match="does not fit these parameters|slots"):
        linalg.EncryptedMatrix.deserialize(client, reseal(cube))
    with pytest.raises(TypeError, match="expected bytes"):
        oboro.Batch.deserialize(client, "text")
