"""Serialization from Python: contexts (with and without keys and the secret key), ciphertexts,
files, sizes, and SerializationError on every kind of bad data (truncated, corrupted, foreign
parameters or keys, wrong object type, wrong version), including a fuzzing loop."""

from __future__ import annotations

import math
import pathlib
import struct

import numpy as np
import pytest

import oboro

FRESH_BITS = 26
OP_BITS = 20


def bits(got, want) -> float:
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return math.inf if err == 0 else -math.log2(err)


@pytest.fixture(scope="module")
def client():
    return oboro.Context.from_preset("S1").keygen(rotations=[1, -2], conjugation=True)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_public_context_round_trip_computes_like_the_original(client, rng):
    data = client.serialize()
    assert isinstance(data, bytes)
    server = oboro.Context.deserialize(data)
    assert not server.has_secret_key and server.has_public_key and server.has_relin_key
    assert server.has_conjugation_key
    assert server.rotations == [-2, 1]
    assert server.preset == client.preset
    assert server.slots == client.slots and server.max_level == client.max_level
    x = rng.uniform(-1, 1, (3, 5))
    # client encrypts, the server computes on deserialized data only, the client decrypts
    ct = oboro.Ciphertext.deserialize(server, client.encrypt(x).serialize())
    y = (ct * ct + 0.5 * ct).rotate(1)
    back = oboro.Ciphertext.deserialize(client, y.serialize())
    assert back.shape == (3, 5) and back.dtype == np.float64
    want = np.roll(np.concatenate([(x * x + 0.5 * x).ravel(), np.zeros(1)]), -1)[:15].reshape(3, 5)
    assert bits(client.decrypt(back), want) >= OP_BITS
    with pytest.raises(oboro.MissingKey):
        server.decrypt(ct)
    # the server's own encryptions (public key) decrypt on the client
    z = oboro.Ciphertext.deserialize(client, server.encrypt(x).serialize())
    assert bits(client.decrypt(z), x) >= 22


def test_secret_key_only_on_request(client, rng):
    assert oboro.Context.deserialize(client.serialize()).has_secret_key is False
    full = oboro.Context.deserialize(client.serialize(secret_key=True))
    assert full.has_secret_key
    x = rng.uniform(-1, 1, 8)
    assert bits(full.decrypt(client.encrypt(x)), x) >= FRESH_BITS
    with pytest.raises(oboro.MissingKey, match="secret_key=True"):
        client.public().serialize(secret_key=True)


def test_parameters_only_and_manual_mode():
    ctx = oboro.Context.from_preset("S2", auto=False)
    params = oboro.Context.deserialize(ctx.serialize(), auto=False)
    assert params.auto is False
    assert params.preset == "S2" and not params.has_public_key
    assert params.describe().splitlines()[0] == ctx.describe().splitlines()[0]


def test_complex_and_scaled_ciphertexts_keep_level_scale_shape(client, rng):
    z = rng.uniform(-1, 1, (2, 2)) + 1j * rng.uniform(-1, 1, (2, 2))
    ct = (client.encrypt(z) * 0.25).conj()
    back = oboro.Ciphertext.deserialize(client, ct.serialize())
    assert (back.level, back.scale, back.slots, back.shape, back.dtype) == (ct.level, ct.scale, ct.slots, ct.shape, ct.dtype)
    assert bits(client.decrypt(back), np.conj(z * 0.25)) >= OP_BITS


def test_seeded_compression_halves_fresh_ciphertexts(client, rng):
    ct = client.encrypt(rng.uniform(-1, 1, client.slots))
    small, big = len(ct.serialize()), len(ct.serialize(compress=False))
    assert small < 0.51 * big
    # (60 + 40 bits) * 8192 coefficients / 8 per polynomial: packed, not 8 bytes per residue
    assert big < 2 * 2 * 8192 * 8
    assert len((ct + ct).serialize()) == big  # an operation consumes the seed
    # keys: compressed context is about half
    assert len(client.serialize()) < 0.52 * len(client.serialize(compress=False))


def test_files(client, rng, tmp_path: pathlib.Path):
    x = rng.uniform(-1, 1, 4)
    client.save(tmp_path / "ctx.oboro")
    client.encrypt(x).save(str(tmp_path / "x.ct"))
    server = oboro.Context.load(tmp_path / "ctx.oboro")
    ct = oboro.Ciphertext.load(server, tmp_path / "x.ct")
    (ct * 2).save(tmp_path / "y.ct")
    assert bits(client.decrypt(oboro.Ciphertext.load(client, tmp_path / "y.ct")), 2 * x) >= FRESH_BITS - 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx.oboro", "x.ct", "y.ct"]
    with pytest.raises(oboro.Error, match="missing"):
        oboro.Context.load(tmp_path / "missing")


def test_serialized_info(client):
    info = oboro.serialized_info(client.serialize())
    assert info["type"] == "bundle" and info["format_version"] == 1
    assert [p["type"] for p in info["parts"]] == ["context", "public key", "relinearization key", "Galois keys"]
    ct = client.encrypt([1.0])
    assert oboro.serialized_info(ct.serialize())["type"] == "ciphertext"
    assert oboro.serialized_info(bytearray(ct.serialize()))["size"] == len(ct.serialize())


# ---- bad data ------------------------------------------------------------------------------------


def reseal(b: bytes | bytearray) -> bytes:
    """Fixes the payload size and the checksums after a mutation (those of the records nested in a
    bundle or a matrix too), so that the field checks are reached: the library's io::reseal."""
    return oboro._core._reseal(bytes(b))


def test_checksum_is_xxh64_of_an_independent_implementation(client):
    """The stored checksum is XXH64 (seed 0) of the header and the payload as the PyPI xxhash package
    computes it, also after reseal: the format's checksum is the documented one."""
    xxhash = pytest.importorskip("xxhash")
    data = bytearray(client.encrypt([0.5]).serialize())
    assert int.from_bytes(data[-8:], "little") == xxhash.xxh64_intdigest(bytes(data[:-8]))
    data[100] ^= 1
    sealed = reseal(data)
    assert int.from_bytes(sealed[-8:], "little") == xxhash.xxh64_intdigest(sealed[:-8])
    assert sealed[:-8] == bytes(data[:-8])


def test_wrong_parameters_keys_and_types(client):
    other_params = oboro.Context.from_preset("S2").keygen(rotations=[])
    other_keys = oboro.Context.from_preset("S1").keygen(rotations=[])
    ct = client.encrypt([0.5])
    with pytest.raises(oboro.SerializationError, match="other parameters"):
        oboro.Ciphertext.deserialize(other_params, ct.serialize())
    with pytest.raises(oboro.SerializationError, match="other keys"):
        oboro.Ciphertext.deserialize(other_keys, ct.serialize())
    with pytest.raises(oboro.SerializationError, match="not a ciphertext"):
        oboro.Ciphertext.deserialize(client, client.serialize(keys=False)[36:-8])
    with pytest.raises(oboro.SerializationError, match="does not start with a context"):
        oboro.Context.deserialize(ct.serialize())
    with pytest.raises(TypeError, match="expected bytes"):
        oboro.Ciphertext.deserialize(client, "not bytes")
    # mixing a deserialized copy with the original's ciphertexts is fine (same key set)
    copy = oboro.Context.deserialize(client.serialize())
    assert client.decrypt(copy.encrypt([0.25]) + ct).shape == (1,)


@pytest.mark.parametrize("cut", [0, 7, 31, 32, 100, -9, -1])
def test_truncated(client, cut):
    data = client.encrypt([0.5, 0.25]).serialize()
    with pytest.raises(oboro.SerializationError, match="truncated"):
        oboro.Ciphertext.deserialize(client, data[:cut])


def test_corrupted_and_versions(client):
    data = bytearray(client.encrypt([0.5]).serialize())
    flipped = bytearray(data)
    flipped[200] ^= 4
    with pytest.raises(oboro.SerializationError, match="checksum"):
        oboro.Ciphertext.deserialize(client, bytes(flipped))
    with pytest.raises(oboro.SerializationError, match="magic"):
        oboro.Ciphertext.deserialize(client, b"PK\x03\x04" + bytes(data[4:]))
    with pytest.raises(oboro.SerializationError, match="unexpected bytes"):
        oboro.Ciphertext.deserialize(client, bytes(data) + b"\0")
    newer = bytearray(data)
    newer[8] = 11  # one past the newest version this build reads (10)
    with pytest.raises(oboro.SerializationError, match="version 11"):
        oboro.Ciphertext.deserialize(client, reseal(newer))


# The messages of the checks of a record's header and checksum (io/format.cpp read_record, io/serialize.cpp
# open, and Context.deserialize's first look), made before any field of the payload is read: a mutant
# refused with one of these did not reach the fields. The last ones are read_record's own truncations
# (the header's u32 flags: "4 bytes"; a payload's flags byte needs 1).
HEADER_CHECKS = (
    "bad magic",
    "format version",
    "unknown object type",
    "reserved header flags",
    "the header announces a payload",
    "checksum mismatch",
    ", not a ",
    "after the end of the record",
    "written for other parameters",
    "does not start with a context",
    "the header needs",
    "the object type needs",
    "the flags needs 4 bytes",
    "the context id needs",
    "the payload size needs",
)


def mutate(rng: np.random.Generator, data: bytes) -> bytearray:
    """One random bit flip, truncation or extension."""
    b = bytearray(data)
    kind = rng.integers(3)
    if kind == 0:
        b[rng.integers(len(b))] ^= 1 << int(rng.integers(8))
    elif kind == 1:
        b = b[: rng.integers(len(b))]
    else:
        b += bytes(rng.integers(0, 256, int(rng.integers(1, 32)), dtype=np.uint8))
    return b


def test_fuzzing_loop(client):
    """Random mutations of a context bundle, a ciphertext, a batch and a matrix: SerializationError or
    a valid object, nothing else. Every other mutant is re-sealed (reseal: payload size and checksums,
    nested records too) so that it gets past the checksum, and the test counts the mutants that reach
    the fields (they load, or a check of the payload refuses them, not one of the header or the
    checksum): at least 60% of the re-sealed ones, all of them for the records without nested ones
    (a truncation inside a nested record, a third of the bundle's and the matrix's mutants, cuts the
    nesting itself, which re-sealing cannot mend), and none of the others. The C++ suite runs a larger
    loop (test_io_fuzz.cpp, also under AddressSanitizer) and scripts/fuzz.sh the coverage-guided
    fuzzers."""
    rng = np.random.default_rng(99)
    originals = [
        ("context", client.serialize(keys=False), lambda b: oboro.Context.deserialize(b)),
        ("ciphertext", client.encrypt([0.5, -0.5]).serialize(), lambda b: oboro.Ciphertext.deserialize(client, b)),
        ("batch", client.encrypt_batch(np.ones((3, 4))).serialize(), lambda b: oboro.Batch.deserialize(client, b)),
        ("matrix", oboro.linalg.encrypt_matrix(client, np.ones((2, 3)), method="jiang").serialize(),
         lambda b: oboro.linalg.EncryptedMatrix.deserialize(client, b)),
    ]
    per_kind = 300
    for name, data, load in originals:
        reached = {True: 0, False: 0}  # by re-sealed or not
        for i in range(per_kind):
            sealed = i % 2 == 1
            b = mutate(rng, data)
            if sealed:
                b = reseal(b)
            try:
                load(bytes(b))
                past_header = True
            except oboro.SerializationError as e:
                past_header = not any(check in str(e) for check in HEADER_CHECKS)
            reached[sealed] += past_header
        half = per_kind // 2
        print(f"{name}: {reached[True]}/{half} re-sealed and {reached[False]}/{half} other mutants reached the fields")
        assert reached[True] >= (0.6 if name in ("context", "matrix") else 1.0) * half, (name, reached)
        assert reached[False] == 0, (name, reached)
