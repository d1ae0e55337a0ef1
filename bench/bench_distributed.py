#!/usr/bin/env python3
"""oboro.distributed on a local Ray cluster against one process: the sharded genome search and a
block matrix product with 1 and 2 workers, the speed-up, the overhead per task, the bytes moved
and the context loaded per worker.

usage: bench_distributed.py [--repeat 3] [--records 16384] [--snps 8] [--matrix 96] [--d 16] [--quick]
                            [--json docs/benchmarks/distributed.json]
                            [--markdown docs/benchmarks/distributed.md] [--docs docs/distributed.md]

Configurations, timed in `repeat` interleaved rounds after a warm-up round (medians reported):
- one process with 1 and with 2 oboro threads (no Ray): genome_server.Server.answer and eA @ eB;
- Ray with 1 and with 2 workers, one task or actor per worker with 1 thread each: ShardedServer
  over 1 and 2 shards (aligned on the records of one reply) and dctx.matmul with choose_tiles'
  tiling for 1 and 2 workers, on one local cluster.
Overheads, with 2 tasks at once: a no-op Ray task's round trip; a map of the identity over a
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


def interleaved(configs: dict, repeat: int) -> dict:
    """Median seconds of each config's run() over `repeat` rounds after one warm-up round. Every
    round runs every config once, in a rotating order, so that load from other work on the machine
    falls on all configs alike instead of on whichever ran at that moment."""
    names = list(configs)
    for name in names:
        configs[name]()
    times: dict = {name: [] for name in names}
    for r in range(repeat):
        for name in names[r % len(names):] + names[: r % len(names)]:
            t = time.perf_counter()
            configs[name]()
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def with_threads(threads: int, fn):
    """fn run with `threads` oboro threads in this process (the one-process baselines)."""
    def run():
        before = oboro.num_threads()
        oboro.set_num_threads(threads)
        try:
            return fn()
        finally:
            oboro.set_num_threads(before)
    return run


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
        self.server = Server(self.db)
        t = time.perf_counter()
        self.server.receive_context(self.public)
        self.setup_s = time.perf_counter() - t
        self.replies = self.server.answer(len(self.query), self.request)

        self.mctx = oboro.Context.from_preset("S2")
        linalg.keygen(self.mctx, (matrix, matrix, matrix), method="block", d=d)
        A, B = rng.uniform(-1, 1, (matrix, matrix)), rng.uniform(-1, 1, (matrix, matrix))
        self.eA, self.eB = (linalg.encrypt_matrix(self.mctx, M, method="block", d=d) for M in (A, B))
        self.product = (self.eA @ self.eB).serialize()
        self.matrix, self.d = matrix, d

    def answer(self):
        return self.server.answer(len(self.query), self.request)

    def matmul(self):
        return self.eA @ self.eB


def measure(w: Workloads, repeat: int) -> dict:
    """One process with 1 and 2 threads, and Ray with 1 and 2 workers, interleaved. The cluster has
    5 logical CPUs: the 1-shard and the 2-shard genome servers (one CPU per actor, held while they
    live) side by side, and 2 for the product's tasks. Only one configuration runs at a time, so at
    most 2 tasks or actors compute at once, on the machine's 2 cores."""
    t = time.perf_counter()
    ray.init(num_cpus=5, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             runtime_env={"working_dir": str(GENOME_DIR)})
    ray_start_s = time.perf_counter() - t
    try:
        gctx = od.DistributedContext(oboro.Context.deserialize(w.public))
        servers, setup = {}, {}
        for k in (1, 2):
            t = time.perf_counter()
            servers[k] = od.ShardedServer(gctx, Server, w.db, shards=k, align=w.per_reply)
            servers[k].pids()  # every shard loaded the context and encoded its records
            setup[k] = time.perf_counter() - t
        mctx = od.DistributedContext(w.mctx)
        # Ray keeps a pool of worker processes and may give a task to any idle one; each loads the
        # context on its first task (the model's "per worker, once"). Load it in the whole pool
        # first, so that the timed rounds measure the steady state, not which process Ray picked.
        ray.get([_prime.options(num_cpus=0.1).remote(mctx.handle) for _ in range(16)])
        gk = w.eA.grid[1]
        tilings = {k: od.choose_tiles(w.eA.grid[0], gk, w.eB.grid[1], k) for k in (1, 2)}
        results: dict = {}

        def genome_on(k):
            def run():
                results[("genome", k)] = servers[k].answer(len(w.query), w.request)
            return run

        def matmul_on(k):
            def run():
                results[("matmul", k)] = mctx.matmul(w.eA, w.eB, tilings[k]).collect()
            return run

        configs = {("genome", "t1"): with_threads(1, w.answer), ("genome", "t2"): with_threads(2, w.answer),
                   ("genome", "r1"): genome_on(1), ("genome", "r2"): genome_on(2),
                   ("matmul", "t1"): with_threads(1, w.matmul), ("matmul", "t2"): with_threads(2, w.matmul),
                   ("matmul", "r1"): matmul_on(1), ("matmul", "r2"): matmul_on(2)}
        med = interleaved(configs, repeat)
        for k in (1, 2):  # every distributed result, byte for byte
            if results[("genome", k)] != w.replies:
                raise SystemExit(f"bench_distributed: the sharded genome search's replies differ ({k} shards)")
            if results[("matmul", k)].serialize() != w.product:
                raise SystemExit(f"bench_distributed: the distributed product differs ({k} workers)")
        local = [{"threads": t, "genome_s": med[("genome", f"t{t}")], "matmul_s": med[("matmul", f"t{t}")]}
                 for t in (1, 2)]
        runs = [{"cpus": k, "genome_s": med[("genome", f"r{k}")], "matmul_s": med[("matmul", f"r{k}")],
                 "genome_shards": servers[k].shards, "genome_setup_s": setup[k], "matmul_tiling": list(tilings[k])}
                for k in (1, 2)]
        for srv in servers.values():
            srv.shutdown()
        return {"ray_start_s": ray_start_s, "local": local, "ray": runs, "overhead": overheads(w, mctx, repeat)}
    finally:
        ray.shutdown()


@ray.remote
def _noop() -> None:
    return None


@ray.remote
def _prime(handle: list) -> None:
    od.load_context(handle)
    time.sleep(0.3)  # keep this worker busy so that the other priming tasks go to other workers


def _identity(batch):
    return batch


def timed(fn, repeat: int) -> float:
    """Median seconds of fn() over `repeat` runs after one warm-up run."""
    return interleaved({"only": fn}, repeat)["only"]


def overheads(w: Workloads, dctx, repeat: int) -> dict:
    """What a task costs beyond its work, on this cluster (2 tasks at once: the machine's cores)."""
    noop_s = timed(lambda: ray.get(_noop.remote()), max(repeat, 20))
    # 32 ciphertexts at the top level of S2 (N = 2^14, 4 primes), results of an operation (no
    # seeds): what a map's shard weighs
    ctx = w.mctx
    batch = ctx.encrypt_batch(np.random.default_rng(1).uniform(-1, 1, (32, 16))) + 0.0
    shard_bytes = len(batch.serialize())
    workers = 2
    sb = dctx.shard(batch, workers)
    map_s = timed(lambda: sb.map(_identity).collect(), repeat)
    ser_s = timed(lambda: oboro.Batch.deserialize(ctx, batch.serialize()), repeat)  # one pass, one process
    loads = {m["worker"]["pid"]: m["worker"] for m in sb.map(_identity).metas()}
    ct = batch[0]
    product_s = timed(with_threads(1, lambda: ct * ct), max(repeat, 10))  # automatic mode: relinearized, rescaled
    return {
        "product_one_ciphertext_s": product_s,
        "noop_task_s": noop_s,
        "map_identity": {"ciphertexts": len(batch), "bytes": shard_bytes, "tasks": workers, "seconds": map_s,
                         "serialize_deserialize_s": ser_s},
        "context_bytes": dctx.nbytes,
        # what each worker process does once (ray.get of the bundle, then the checked load), timed here
        # alone: the workers' own timings include whatever else ran on the cores at that moment
        "context_load_s": timed(lambda: oboro.Context.deserialize(ray.get(dctx.ref).blob), 3),
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
    m_mib = mi["seconds"] / (mi["bytes"] / 2**20)  # seconds per MiB moved in and back out
    ct_mib = mi["bytes"] / mi["ciphertexts"] / 2**20
    lines += ["", "| overhead (2-worker cluster) | measured |", "|---|---:|",
              f"| no-op Ray task, round trip | {1e3 * ov['noop_task_s']:.2f} ms |",
              f"| map of the identity over {mi['ciphertexts']} ciphertexts ({mi['bytes'] / 2**20:.1f} MiB) in "
              f"{mi['tasks']} tasks | {1e3 * mi['seconds']:.1f} ms |",
              f"| for scale: oboro's serialize + deserialize of the same bytes once, in one process | "
              f"{1e3 * mi['serialize_deserialize_s']:.1f} ms |",
              f"| m: moving shards to the workers and back (the map above), per MiB | {1e3 * m_mib:.2f} ms |",
              f"| where a map pays on 2 workers: work per ciphertext above m x its size x k / (k - 1), k = 2 "
              f"(S2, {ct_mib:.2f} MiB) | {1e3 * m_mib * ct_mib * 2:.1f} ms |",
              f"| for scale: one product (multiply, relinearize, rescale) of one S2 ciphertext, one process, 1 thread | "
              f"{1e3 * ov['product_one_ciphertext_s']:.1f} ms |",
              f"| genome query, Ray 1 worker minus one process 1 thread (one actor call; query and replies moved) | "
              f"{1e3 * (rep['ray'][0]['genome_s'] - rep['local'][0]['genome_s']):.0f} ms |",
              f"| block product, Ray 1 worker minus one process 1 thread (one task; {moved / 2**20:.1f} MiB moved) | "
              f"{1e3 * (rep['ray'][0]['matmul_s'] - rep['local'][0]['matmul_s']):.0f} ms |",
              f"| public context (S2 with the product's keys), loaded once per worker (ray.get and the checked load) | "
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
        "- Ray: a local cluster on this machine, 1 or 2 workers (shards, tiles), one task or actor per worker with 1 "
        "oboro thread each. All eight configurations are timed in interleaved rounds, so that other work on the "
        "machine weighs on them alike.", "",
        summary_table(rep), "",
        "| setup | seconds |", "|---|---:|",
    ]
    head += [f"| one process: genome server's context loaded and records encoded | {rep['genome']['setup_s']:.2f} |",
             f"| ray.init (a local cluster) | {rep['ray_start_s']:.2f} |"]
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
    print("== inputs, keys and the single-process references", file=sys.stderr)
    w = Workloads(args.records, args.snps, args.matrix, args.d)
    print("== one process and Ray, interleaved", file=sys.stderr)
    measured = measure(w, args.repeat)
    rep = {
        "benchmark": "distributed", "machine": machine_info(oboro.num_threads()), "ray_version": ray.__version__,
        "repeat": args.repeat, "load_average": [round(load_start, 2), round(os.getloadavg()[0], 2)],
        "genome": {"records": w.records, "snps": w.snps, "query_size": len(w.query), "per_reply": w.per_reply,
                   "replies": len(w.replies), "reply_bytes": sum(map(len, w.replies)), "query_bytes": len(w.request),
                   "public_context_bytes": len(w.public), "setup_s": w.setup_s},
        "matmul": {"n": w.matrix, "d": w.d, "grid": w.eA.grid[0], "operand_bytes": len(w.eA.serialize()),
                   "product_bytes": len(w.product)},
        **measured,
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
