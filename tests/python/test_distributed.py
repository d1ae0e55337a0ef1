"""oboro.distributed on a local Ray cluster started here (2 CPUs, no dashboard): every result is
bit-identical to the same evaluation in one process (serialized words compared, not decrypted
values), the context ships without its secret key and is loaded once per worker process, a
worker killed mid-task is replaced by Ray and the result is still exact, bad input raises typed
errors, and without Ray the import says how to install it."""

from __future__ import annotations

import functools
import importlib
import operator
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

import oboro
from oboro import linalg

ROOT = Path(__file__).resolve().parents[2]
GENOME_DIR = ROOT / "examples" / "genome_search"


def words(x) -> bytes:
    """Every word of a result (compress=False: no seed stands in for a polynomial)."""
    return x.serialize(compress=False)


# ---- without Ray --------------------------------------------------------------------------------

def test_without_ray_the_import_says_how_to_install(monkeypatch):
    for name in [m for m in sys.modules if m == "oboro.distributed" or m.startswith("oboro.distributed.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError, as when not installed
    with pytest.raises(ImportError, match=r"pip install 'oboro\[ray\]'"):
        importlib.import_module("oboro.distributed")


# ---- the cluster ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ray():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'oboro[ray]')")
    started = not ray.is_initialized()
    if started:
        # working_dir: the genome search server's modules, importable by the workers (Ray uploads the
        # directory to its own storage; nothing leaves the machine)
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
                 runtime_env={"working_dir": str(GENOME_DIR)})
    # the functions this module maps over go to the workers by value (the workers cannot import
    # this test module by name)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield ray
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def od(ray):
    import oboro.distributed as od

    return od


@pytest.fixture(scope="module")
def ctx():
    c = oboro.Context.from_preset("S1")
    c.keygen(rotations=[1, 2])
    return c


@pytest.fixture(scope="module")
def dctx(od, ctx):
    return od.DistributedContext(ctx)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    return rng.uniform(-1, 1, (11, 8)), rng.uniform(-1, 1, (11, 8))


# ---- the context ------------------------------------------------------------------------------------

def test_context_ships_without_secret_key_and_loads_once_per_worker(ray, od, ctx, dctx, data):
    assert ctx.has_secret_key
    assert "secret key" not in dctx.parts and dctx.parts[0] == "context"
    stored = ray.get(dctx.ref)
    kinds = [p["type"] for p in oboro.serialized_info(stored.blob)["parts"]]
    assert "secret key" not in kinds
    assert not oboro.Context.deserialize(stored.blob).has_secret_key
    with pytest.raises(TypeError, match="stays on the driver"):
        import pickle

        pickle.dumps(dctx)
    # many tasks over a few worker processes: each process deserialized the context once
    sb = dctx.shard(ctx.encrypt_batch(data[0]), shards=4)
    metas = []
    for _ in range(3):
        sb = sb + 0.125
        metas += sb.metas()
    workers = {m["worker"]["pid"]: m["worker"] for m in metas}
    assert all(w["context_loads"] == 1 for w in workers.values()), workers
    assert all(w["threads"] == 1 for w in workers.values())  # num_cpus=1 per task: no oversubscription


def test_context_errors(od, ctx, monkeypatch):
    with pytest.raises(TypeError, match="oboro.Context"):
        od.DistributedContext(b"not a context")
    with pytest.raises(oboro.MissingKey, match="keygen"):
        od.DistributedContext(oboro.Context.from_preset("S1"))
    for bad in (0, 1.5):
        with pytest.raises(oboro.InvalidArgument, match="num_cpus"):
            od.DistributedContext(ctx, num_cpus=bad)
    with pytest.raises(oboro.InvalidArgument, match="max_retries"):
        od.DistributedContext(ctx, max_retries=-1)
    monkeypatch.setattr(od.context.ray, "is_initialized", lambda: False)
    with pytest.raises(oboro.InvalidArgument, match=r"ray.init\(\)"):
        od.DistributedContext(ctx)


def test_ray_serializes_oboro_objects_through_the_checked_format(ray, ctx, data):
    """What Ray's serializer (its cloudpickle) writes for a Batch is oboro's record and the loader
    oboro._pickle.unpickle: damaged bytes are refused by the format's checks, not loaded."""
    b = ctx.encrypt_batch(data[0])
    blob = ray.cloudpickle.dumps(b)
    record = b.serialize()
    assert record in blob and b"oboro._pickle" in blob and b"unpickle" in blob
    assert words(ray.cloudpickle.loads(blob)) == words(b)
    at = blob.index(record) + len(record) // 2
    damaged = blob[:at] + bytes([blob[at] ^ 0x10]) + blob[at + 1 :]
    with pytest.raises(oboro.SerializationError):
        ray.cloudpickle.loads(damaged)
    # and through the object store: what a worker gets is what the driver put
    assert words(ray.get(ray.put(b))) == words(b)


# ---- ShardedBatch ------------------------------------------------------------------------------------

def _fma(a, b, c):
    """Defined here, sent to the workers by value."""
    return a * b + c


def test_map_and_operators_are_bit_identical(ray, od, ctx, dctx, data):
    X, Y = data
    bx, by = ctx.encrypt_batch(X), ctx.encrypt_batch(Y)
    sx, sy = dctx.shard(bx, shards=3), dctx.shard(by, shards=3)
    assert sx.lengths == [4, 4, 3] and len(sx) == 11

    y = (sx * sy + 0.5 * sx).rotate(1)
    assert all(isinstance(r, ray.ObjectRef) for r in y.refs)  # stays in the cluster until collected
    assert words(y.collect()) == words((bx * by + 0.5 * bx).rotate(1))

    pt = ctx.encode(Y[0])
    cases = [
        (2.0 - sx, 2.0 - bx),
        (sx - Y, bx - Y),  # an array of the batch's shape: row i for element i
        (sx * Y[3], bx * Y[3]),  # an array of one element's shape: the same for every element
        (sx + pt, bx + pt),
        (-sx, -bx),
        (sx.rotate([i % 3 for i in range(11)]), bx.rotate([i % 3 for i in range(11)])),
        (sx.map(_fma, sy, 0.25), _fma(bx, by, 0.25)),
        (sx.map(operator.methodcaller("polyval", [0.5, 1.0])), bx.polyval([0.5, 1.0])),
        (sx.drop_to_level(0) + sy.drop_to_level(0), bx.drop_to_level(0) + by.drop_to_level(0)),
    ]
    for got, want in cases:
        assert words(got.collect()) == words(want)
    assert np.allclose(ctx.decrypt(cases[1][0].collect()), X - Y, atol=1e-5)


@pytest.mark.parametrize("shards", [1, 3, 5])
def test_sum_across_shards_is_bit_identical(od, ctx, dctx, data, shards):
    X, Y = data
    bx, by = ctx.encrypt_batch(X), ctx.encrypt_batch(Y)
    local = bx * by
    total = (dctx.shard(bx, shards) * dctx.shard(by, shards)).sum()
    assert words(total) == words(functools.reduce(operator.add, local.to_ciphertexts()))
    assert words(od.batch_total(local)) == words(total)
    assert np.allclose(ctx.decrypt(total), (X * Y).sum(axis=0), atol=1e-4)


def _die_once(batch, marker):
    """The first task to get here kills its worker process (as a crash or an OOM kill would)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return batch * 2.0 + 1.0
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os._exit(1)


def test_a_worker_killed_mid_task_is_retried_and_the_result_is_exact(od, ctx, dctx, data, tmp_path):
    bx = ctx.encrypt_batch(data[0])
    marker = tmp_path / "died"
    sb = dctx.shard(bx, shards=2).map(_die_once, str(marker))
    got = sb.collect()
    assert marker.exists()  # a worker did die
    dead = int(marker.read_text())
    assert words(got) == words(bx * 2.0 + 1.0)
    placed = [m["worker"] for m in sb.metas()]
    assert dead not in {w["pid"] for w in placed}  # the retry ran in another process ...
    assert all(w["context_loads"] == 1 for w in placed)  # ... which loaded the context itself


def _drop_first_shard(batch):
    return batch.drop_to_level(0) if len(batch) == 4 else batch


def _not_a_batch(batch):
    return batch[0]


def test_sharded_batch_errors(od, ctx, dctx, data):
    X = data[0]
    bx = ctx.encrypt_batch(X)
    for bad in (0, -1, 12):
        with pytest.raises(oboro.InvalidArgument, match="shards"):
            dctx.shard(bx, shards=bad)
    with pytest.raises(TypeError, match="integer"):
        dctx.shard(bx, shards="2")
    with pytest.raises(TypeError, match="oboro.Batch"):
        dctx.shard(X, shards=2)
    with pytest.raises(oboro.InvalidArgument, match="no batches"):
        od.ShardedBatch.from_batches(dctx, [])
    other = oboro.Context.from_preset("S1")
    other.keygen(rotations=[1])
    with pytest.raises(oboro.ContextMismatch, match="other keys"):
        dctx.shard(other.encrypt_batch(X), shards=2)
    with pytest.raises(oboro.ContextMismatch, match="shard 1"):
        od.ShardedBatch.from_batches(dctx, [bx[:3], other.encrypt_batch(X[3:])])
    with pytest.raises(oboro.LevelMismatch, match="shard 1"):
        od.ShardedBatch.from_batches(dctx, [bx[:3], bx[3:].drop_to_level(0)])
    sb = od.ShardedBatch.from_batches(dctx, [bx[:4], bx[4:]])
    assert sb.lengths == [4, 7] and words(sb.collect()) == words(bx)
    with pytest.raises(oboro.InvalidArgument, match="sharded differently"):
        sb + dctx.shard(bx, shards=3)
    with pytest.raises(TypeError, match="shard it"):
        sb + bx
    with pytest.raises(TypeError, match="callable"):
        sb.map(42)
    with pytest.raises(TypeError, match="do not pickle"):
        sb.map(oboro.Batch.sum)  # a nanobind method: operator.methodcaller("sum") is the way
    with pytest.raises(oboro.InvalidArgument, match="steps"):
        sb.rotate([1, 2])
    # errors inside tasks come back as the original oboro / Python errors, when the result is needed
    with pytest.raises(oboro.LevelMismatch, match="shard 1"):
        sb.map(_drop_first_shard).sum()
    with pytest.raises(TypeError, match="not an oboro.Batch"):
        sb.map(_not_a_batch).collect()
    with pytest.raises(oboro.MissingKey, match="rotat"):
        sb.rotate(3).collect()


# ---- matrices ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mctx():
    c = oboro.Context.from_preset("S2")
    linalg.keygen(c, (24, 24, 24), method="block", d=8)
    return c


def test_block_matmul_over_workers_is_bit_identical(od, mctx):
    rng = np.random.default_rng(2)
    A, B = rng.uniform(-1, 1, (40, 24)), rng.uniform(-1, 1, (24, 20))
    eA, eB = (linalg.encrypt_matrix(mctx, M, method="block", d=8) for M in (A, B))
    local = words(eA @ eB)
    dm = od.DistributedContext(mctx)
    for tiles in (None, (2, 1), (1, 3), (5, 3), (3, 2)):
        C = dm.matmul(eA, eB, tiles)
        if tiles is not None:
            assert C.tiling == tiles
        got = C.collect()
        assert got.shape == (40, 20) and words(got) == local
    assert np.max(np.abs(mctx.decrypt(got) - A @ B)) < 1e-3
    # one-block methods run as one tile
    linalg.keygen(mctx, (8, 8, 8), method="3d")
    s, t = (linalg.encrypt_matrix(mctx, M[:8, :8], method="3d") for M in (A, B))
    assert words(dm.matmul(s, t).collect()) == words(s @ t)


def test_matmul_errors_and_tiling(od, mctx):
    rng = np.random.default_rng(3)
    A = rng.uniform(-1, 1, (20, 16))
    eA = linalg.encrypt_matrix(mctx, A, method="block", d=8)
    eAT = linalg.encrypt_matrix(mctx, A.T, method="block", d=8)
    dm = od.DistributedContext(mctx)
    for bad in ((0, 1), (4, 1), (1, 4)):  # the product's grid is 3 x 3 blocks
        with pytest.raises(oboro.InvalidArgument, match="tiles"):
            dm.matmul(eA, eAT, bad)
    with pytest.raises(TypeError, match="pair of integers"):
        dm.matmul(eA, eAT, "2x1")
    with pytest.raises(oboro.InvalidArgument, match="do not match"):
        dm.matmul(eA, eA)
    with pytest.raises(oboro.InvalidArgument, match="encrypt both alike"):
        dm.matmul(eA, linalg.encrypt_matrix(mctx, A.T, method="block", d=4))
    with pytest.raises(TypeError, match="not an EncryptedMatrix"):
        dm.matmul(eA, A.T)
    other = oboro.Context.from_preset("S2")
    other.keygen(rotations=[1])
    with pytest.raises(oboro.ContextMismatch, match="operand 'B'"):
        dm.matmul(eA, linalg.encrypt_matrix(other, A.T, method="block", d=8))
    assert od.choose_tiles(4, 4, 4, 1) == (1, 1)
    assert sorted(od.choose_tiles(4, 4, 4, 2)) == [1, 2]
    assert od.choose_tiles(1, 3, 1, 8) == (1, 1)


# ---- the genome search over a sharded database -------------------------------------------------------------

@pytest.fixture(scope="module")
def genome(ray):
    sys.path.insert(0, str(GENOME_DIR))
    from genome_client import Client
    from genome_db import Layout, plaintext_search, synthetic_database
    from genome_server import Server

    client = Client(snps=4)  # blocks of 16 slots: 512 records per ciphertext, one reply per 8192 records
    db = synthetic_database(20000, 4, seed=11)  # 3 replies
    query = {0: int(db[9, 0]), 2: int(db[9, 2]), 3: int(db[9, 3])}
    layout = Layout(4, client.ctx.slots)
    return client, db, query, layout, Server, plaintext_search


def test_sharded_genome_search_answers_the_single_servers_bytes(od, genome):
    client, db, query, layout, Server, plaintext_search = genome
    request = client.encrypt_query(query)
    single = Server(db)
    single.receive_context(client.public_context())
    want = single.answer(len(query), request)
    dctx = od.DistributedContext(client.ctx)
    per_reply = layout.block * layout.per_ciphertext
    with od.ShardedServer(dctx, Server, db, shards=2, align=per_reply) as server:
        assert server.bounds == [(0, 16384), (16384, 20000)]
        assert server.answer(len(query), request) == want
        # kill one shard's actor process: Ray restarts it (re-encoding its shard) and the answer is the same
        pids = server.pids()
        os.kill(pids[1], signal.SIGKILL)
        replies = server.answer(len(query), request)
        assert replies == want and server.pids()[1] != pids[1]
    found = client.matching_ids(replies, len(db), len(query))
    assert np.array_equal(found, plaintext_search(db, query)) and len(found) > 0


def test_sharded_server_errors(od, genome):
    client, db, query, layout, Server, _ = genome
    dctx = od.DistributedContext(client.ctx)
    with pytest.raises(oboro.InvalidArgument, match="align"):
        od.ShardedServer(dctx, Server, db, align=0)
    with pytest.raises(oboro.InvalidArgument, match="1..3"):
        od.ShardedServer(dctx, Server, db, shards=4, align=8192)
    with pytest.raises(oboro.InvalidArgument, match="empty"):
        od.ShardedServer(dctx, Server, db[:0])
    with pytest.raises(TypeError, match="callable"):
        od.ShardedServer(dctx, "Server", db)
    from oboro.distributed._split import ranges

    assert ranges(20000, 3, 8192) == [(0, 8192), (8192, 16384), (16384, 20000)]
    assert ranges(10, 3) == [(0, 4), (4, 7), (7, 10)]


def test_the_usage_example_of_docs_distributed_runs(ray, capsys):
    """docs/distributed.md's first code block, as written (on this module's cluster: its ray.init()
    is the one line left out)."""
    import re

    text = (ROOT / "docs" / "distributed.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    assert "ray.init()" in code
    exec(compile(code.replace("ray.init()", "pass"), "distributed.md:python-block-1", "exec"), {"__name__": "__doc__"})
    out = capsys.readouterr().out
    assert out.startswith("sigmoid, max error") and float(out.split()[-1]) < 0.05, out


def test_the_figures_in_docs_distributed_are_the_benchmarks(ray, tmp_path):
    """docs/distributed.md's figures block is what bench/bench_distributed.py renders from the committed
    docs/benchmarks/distributed.json (not typed by hand), and so is docs/benchmarks/distributed.md."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("bench_distributed", ROOT / "bench" / "bench_distributed.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rep = json.loads((ROOT / "docs" / "benchmarks" / "distributed.json").read_text())
    copy = tmp_path / "distributed.md"
    copy.write_text((ROOT / "docs" / "distributed.md").read_text())
    bench.update_docs(copy, rep)
    assert copy.read_text() == (ROOT / "docs" / "distributed.md").read_text()
    assert bench.markdown(rep) == (ROOT / "docs" / "benchmarks" / "distributed.md").read_text()
    assert all(r["speedup"] > 0 for r in rep["rows"]) and rep["overhead"]["context_loads_per_worker"] == [1]
