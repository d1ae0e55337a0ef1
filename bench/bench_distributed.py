#!/usr/bin/env python3
"""oboro.distributed on a local Ray cluster against one process: the sharded genome search and a
block matrix product with 1 and 2 workers, the speed-up, the overhead per task, the bytes moved
and the context loaded per worker.

usage: bench_distributed.py [--repeat 3] [--records 16384] [--snps 8] [--matrix 96] [--d 16] [--quick]
                            [--json docs/benchmarks/distributed.json]
                            [--markdown docs/benchmarks/distributed.md] [--docs docs/distributed.md]

Configurations, each timed `repeat` times after a warm-up (medians reported):
- one process with 1 and with 2 oboro threads (no Ray): genome_server.Server.answer and eA @ eB;
- a local Ray cluster with 1 and with 2 CPUs (ray.init(num_cpus=k)), one task or actor per CPU
  with 1 thread each: ShardedServer over k shards (aligned on the records of one reply) and
  dctx.matmul with choose_tiles' tiling for k workers.
Overheads, on the 2-CPU cluster: a no-op Ray task's round trip; a map of the identity over a
sharded Batch (its shards moved into a worker and back through the object store, in oboro's
format), per task and per MiB; the public context's size and its load time in a worker.
Every distributed result is compared byte for byte with the single process's; a difference
stops the program (exit status 1).

--docs rewrites the block between the BEGIN/END bench_distributed markers of docs/distributed.md
with the summary table, so the figures quoted there are the program's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GENOME_DIR = ROOT / "examples" / "genome_search"
sys.path.insert(0, str(GENOME_DIR))

import ray  # noqa: E402

import oboro  # noqa: E402
import oboro.distributed as od  # noqa: E402
from oboro import linalg  # noqa: E402
from oboro.bench import machine_info  # noqa: E402
from genome_client import Client  # noqa: E402
from genome_db import Layout, synthetic_database  # noqa: E402
from genome_search import choose_query  # noqa: E402
from genome_server import Server  # noqa: E402

BEGIN, END = "<!-- BEGIN bench_distributed -->", "<!-- END bench_distributed -->"


def timed(fn, repeat: int) -> tuple[float, object]:
    """Median seconds of fn() over `repeat` runs after one warm-up run, and the last result."""
    out = fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


class Workloads:
    """The inputs, made once with the client's keys, and the single-process references."""

    def __init__(self, records: int, snps: int, matrix: int, d: int, seed: int = 7):
        rng = np.random.default_rng(seed)
        self.client = Client(snps)
        self.public = self.client.public_context()
        self.db = synthetic_database(records, snps, seed)
        self.query = choose_query(self.db, 4, rng)
        self.request = self.client.encrypt_query(self.query)
        layout = Layout(snps, self.client.ctx.slots)
        self.per_reply = layout.block * layout.per_ciphertext
        self.records, self.snps = records, snps

        self.mctx = oboro.Context.from_preset("S2")
        linalg.keygen(self.mctx, (matrix, matrix, matrix), method="block", d=d)
        A, B = rng.uniform(-1, 1, (matrix, matrix)), rng.uniform(-1, 1, (matrix, matrix))
        self.eA, self.eB = (linalg.encrypt_matrix(self.mctx, M, method="block", d=d) for M in (A, B))
        self.matrix, self.d = matrix, d

    def local(self, threads: int, repeat: int) -> dict:
        """One process, `threads` oboro threads: the references the cluster must reproduce."""
        before = oboro.num_threads()
        oboro.set_num_threads(threads)
        try:
            server = Server(self.db)
            t = time.perf_counter()
            server.receive_context(self.public)
            setup = time.perf_counter() - t
            genome_s, replies = timed(lambda: server.answer(len(self.query), self.request), repeat)
            matmul_s, product = timed(lambda: self.eA @ self.eB, repeat)
        finally:
            oboro.set_num_threads(before)
        self.replies, self.product = replies, product.serialize()
        return {"threads": threads, "genome_setup_s": setup, "genome_s": genome_s, "matmul_s": matmul_s}


def cluster_run(w: Workloads, cpus: int, repeat: int) -> dict:
    """The same workloads on a fresh local cluster of `cpus` CPUs."""
    t = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             runtime_env={"working_dir": str(GENOME_DIR)})
    start_s = time.perf_counter() - t
    try:
        out: dict = {"cpus": cpus, "ray_start_s": start_s}
        gctx = od.DistributedContext(oboro.Context.deserialize(w.public))
        t = time.perf_counter()
        with od.ShardedServer(gctx, Server, w.db, align=w.per_reply) as server:
            server.pids()  # every shard loaded the context and encoded its records
            out["genome_setup_s"] = time.perf_counter() - t
            out["genome_shards"] = server.shards
            out["genome_s"], replies = timed(lambda: server.answer(len(w.query), w.request), repeat)
        if replies != w.replies:
            raise SystemExit(f"bench_distributed: the sharded genome search's replies differ ({cpus} CPUs)")

        mctx = od.DistributedContext(w.mctx)
        result = {}

        def product():
            m = mctx.matmul(w.eA, w.eB)
            result["tiling"] = m.tiling
            return m.collect()

        out["matmul_s"], got = timed(product, repeat)
        if got.serialize() != w.product:
            raise SystemExit(f"bench_distributed: the distributed product differs ({cpus} CPUs)")
        out["matmul_tiling"] = list(result["tiling"])
        if cpus >= 2:
            out["overhead"] = overheads(w, mctx, repeat)
        return out
    finally:
        ray.shutdown()


@ray.remote
def _noop() -> None:
    return None


def _identity(batch):
    return batch


def overheads(w: Workloads, dctx, repeat: int) -> dict:
    """What a task costs beyond its work, on this cluster."""
    noop_s, _ = timed(lambda: ray.get(_noop.remote()), max(repeat, 20))
    # 32 ciphertexts at the top level of S2 (N = 2^14, 4 primes), results of an operation (no
    # seeds): what a map's shard weighs
    ctx = w.mctx
    batch = ctx.encrypt_batch(np.random.default_rng(1).uniform(-1, 1, (32, 16))) + 0.0
    shard_bytes = len(batch.serialize())
    workers = dctx.workers()
    sb = dctx.shard(batch, workers)
    map_s, mapped = timed(lambda: sb.map(_identity).collect(), repeat)
    ser_s, _ = timed(lambda: oboro.Batch.deserialize(ctx, batch.serialize()), repeat)  # one pass, one process
    loads = {m["worker"]["pid"]: m["worker"] for m in sb.map(_identity).metas()}
    return {
        "noop_task_s": noop_s,
        "map_identity": {"ciphertexts": len(batch), "bytes": shard_bytes, "tasks": workers, "seconds": map_s,
                         "serialize_deserialize_s": ser_s},
        "context_bytes": dctx.nbytes,
        "context_load_s": statistics.median(v["context_load_seconds"] for v in loads.values()),
        "context_loads_per_worker": sorted({v["context_loads"] for v in loads.values()}),
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summarize(rep: dict) -> list[dict]:
    """One row per workload and configuration: seconds, speed-up over one process with 1 thread."""
    rows = []
    base = {k: rep["local"][0][k] for k in ("genome_s", "matmul_s")}
    names = {"genome_s": "genome search, one query", "matmul_s": "block matrix product"}
    for key, name in names.items():
        for loc in rep["local"]:
            rows.append({"workload": name, "config": f"one process, {_plural(loc['threads'], 'thread')}",
                         "seconds": loc[key], "speedup": base[key] / loc[key]})
        for run in rep["ray"]:
            detail = (_plural(run["genome_shards"], "shard") if key == "genome_s"
                      else f"{run['matmul_tiling'][0]} x {run['matmul_tiling'][1]} tiles")
            rows.append({"workload": name, "config": f"Ray, {_plural(run['cpus'], 'worker')}, {detail}",
                         "seconds": run[key], "speedup": base[key] / run[key]})
    return rows


def summary_table(rep: dict) -> str:
    lines = ["| workload | configuration | median time | speed-up vs one process, 1 thread |", "|---|---|---:|---:|"]
    lines += [f"| {r['workload']} | {r['config']} | {r['seconds']:.3f} s | {r['speedup']:.2f}x |" for r in rep["rows"]]
    ov = rep["overhead"]
    mi = ov["map_identity"]
    mat = rep["matmul"]
    moved = 2 * mat["operand_bytes"] + mat["product_bytes"]  # one tile: both operands in, the product out
    lines += ["", "| overhead (2-worker cluster) | measured |", "|---|---:|",
              f"| no-op Ray task, round trip | {1e3 * ov['noop_task_s']:.2f} ms |",
              f"| map of the identity over {mi['ciphertexts']} ciphertexts ({mi['bytes'] / 2**20:.1f} MiB) in "
              f"{mi['tasks']} tasks | {1e3 * mi['seconds']:.1f} ms |",
              f"| for scale: oboro's serialize + deserialize of the same bytes once, in one process | "
              f"{1e3 * mi['serialize_deserialize_s']:.1f} ms |",
              f"| m: moving shards to the workers and back (the map above), per MiB | {1e3 * mi['seconds'] / (mi['bytes'] / 2**20):.2f} ms |",
              f"| genome query, Ray 1 worker minus one process 1 thread (one actor call; query and replies moved) | "
              f"{1e3 * (rep['ray'][0]['genome_s'] - rep['local'][0]['genome_s']):.0f} ms |",
              f"| block product, Ray 1 worker minus one process 1 thread (one task; {moved / 2**20:.1f} MiB moved) | "
              f"{1e3 * (rep['ray'][0]['matmul_s'] - rep['local'][0]['matmul_s']):.0f} ms |",
              f"| public context (S2 with the product's keys), loaded once per worker | "
              f"{ov['context_bytes'] / 2**20:.1f} MiB, {1e3 * ov['context_load_s']:.0f} ms |",
              f"| context loads per worker process | {', '.join(map(str, ov['context_loads_per_worker']))} |"]
    return "\n".join(lines)


def markdown(rep: dict) -> str:
    m = rep["machine"]
    genome, mat = rep["genome"], rep["matmul"]
    head = [
        "# oboro.distributed: measured", "",
        f"Generated by `bench/bench_distributed.py` on {m['date_utc']}: {m['cpu']}, {m['usable_cores']} usable cores, "
        f"Python {m['python']}, Ray {rep['ray_version']}. Load average (1 min) at the start and end: "
        f"{rep['load_average'][0]:g} and {rep['load_average'][1]:g} (other work on the machine shifts the figures). "
        f"Medians of {_plural(rep['repeat'], 'run')} after a warm-up. Every distributed result was checked to be byte for byte "
        f"the single process's.", "",
        f"- Genome search: {genome['records']:,} records of {genome['snps']} SNPs, N = 2^14, a {genome['query_size']}-"
        f"position query; shards aligned on the {genome['per_reply']:,} records of one reply (ShardedServer, one actor "
        f"per shard). Server setup (context loaded, records encoded) is not in the query time.",
        f"- Block matrix product: {mat['n']} x {mat['n']} times {mat['n']} x {mat['n']}, blocks of {mat['d']} "
        f"({mat['grid']} x {mat['grid']} grid, 3-D base), S2 (N = 2^14); tiles chosen by `choose_tiles`.",
        "- Workers: a local Ray cluster of 1 or 2 CPUs, one task or actor per CPU, 1 oboro thread each.", "",
        summary_table(rep), "",
        "| setup | seconds |", "|---|---:|",
    ]
    head += [f"| one process, {_plural(loc['threads'], 'thread')}: genome server's context and records | {loc['genome_setup_s']:.2f} |"
             for loc in rep["local"]]
    head += [f"| Ray, {_plural(r['cpus'], 'worker')}: ray.init | {r['ray_start_s']:.2f} |" for r in rep["ray"]]
    head += [f"| Ray, {_plural(r['cpus'], 'worker')}: shard servers started, contexts loaded, records encoded | {r['genome_setup_s']:.2f} |"
             for r in rep["ray"]]
    return "\n".join(head) + "\n"


def update_docs(path: Path, rep: dict) -> None:
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"bench_distributed: {path} has no {BEGIN} ... {END} block")
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    block = (f"{BEGIN}\n<!-- written by bench/bench_distributed.py from docs/benchmarks/distributed.json: do not edit -->\n"
             f"Measured on {rep['machine']['date_utc']} ({rep['machine']['cpu']}, {rep['machine']['usable_cores']} cores, "
             f"load average {rep['load_average'][0]:g} to {rep['load_average'][1]:g} from other work; medians of "
             f"{_plural(rep['repeat'], 'run')}; [benchmarks/distributed.md](benchmarks/distributed.md) has the details):"
             f"\n\n{summary_table(rep)}\n{END}")
    path.write_text(before + block + after)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--records", type=int, default=16384, help="genome database records (default 16384: 2 replies at 8 SNPs)")
    p.add_argument("--snps", type=int, default=8)
    p.add_argument("--matrix", type=int, default=96, help="n of the n x n matrices (default 96)")
    p.add_argument("--d", type=int, default=16, help="block size (default 16)")
    p.add_argument("--quick", action="store_true", help="a smoke run: small sizes, one repeat, writes nothing")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--markdown", type=Path, default=None)
    p.add_argument("--docs", type=Path, default=None, help="rewrite the figures block of docs/distributed.md")
    p.add_argument("--from-json", type=Path, default=None, metavar="FILE",
                   help="measure nothing: render --markdown and --docs from the JSON of an earlier run")
    args = p.parse_args(argv)
    if args.from_json:
        rep = json.loads(args.from_json.read_text())
        if args.markdown:
            args.markdown.write_text(markdown(rep))
        if args.docs:
            update_docs(args.docs, rep)
        return 0
    if args.quick:
        args.repeat, args.records, args.snps, args.matrix, args.d = 1, 16384, 4, 32, 16
        args.json = args.markdown = args.docs = None
    if args.repeat < 1 or args.records < 1 or args.matrix < 1:
        print("bench_distributed: --repeat, --records and --matrix must be >= 1", file=sys.stderr)
        return 2

    load_start = os.getloadavg()[0]
    print("== inputs and keys", file=sys.stderr)
    w = Workloads(args.records, args.snps, args.matrix, args.d)
    local = []
    for threads in (1, 2):
        print(f"== one process, {threads} thread(s)", file=sys.stderr)
        local.append(w.local(threads, args.repeat))
    runs = []
    for cpus in (1, 2):
        print(f"== Ray, {cpus} worker(s)", file=sys.stderr)
        runs.append(cluster_run(w, cpus, args.repeat))
    rep = {
        "benchmark": "distributed", "machine": machine_info(oboro.num_threads()), "ray_version": ray.__version__,
        "repeat": args.repeat, "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        "genome": {"records": w.records, "snps": w.snps, "query_size": len(w.query), "per_reply": w.per_reply,
                   "replies": len(w.replies), "reply_bytes": sum(map(len, w.replies)), "query_bytes": len(w.request),
                   "public_context_bytes": len(w.public)},
        "matmul": {"n": w.matrix, "d": w.d, "grid": w.eA.grid[0], "operand_bytes": len(w.eA.serialize()),
                   "product_bytes": len(w.product)},
        "local": local, "ray": runs, "overhead": runs[-1]["overhead"],
    }
    rep["rows"] = summarize(rep)
    md = markdown(rep)
    print(md)
    if args.json:
        args.json.write_text(json.dumps(rep, indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    if args.markdown:
        args.markdown.write_text(md)
        print(f"wrote {args.markdown}", file=sys.stderr)
    if args.docs:
        update_docs(args.docs, rep)
        print(f"updated {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
