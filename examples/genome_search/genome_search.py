"""Private genome search (paper 002's application): a client asks which records of a server's
genotype database carry a set of SNP genotypes, without the server learning the query or the answer.

    python examples/genome_search/genome_search.py [--records 5000] [--query 3:1,7:0 | --query-size 4]
        [--json PATH] [--markdown PATH]

The example generates a seeded synthetic database (genome_db.py), runs the client (genome_client.py)
and the server (genome_server.py) as separate roles that exchange only bytes, checks the decrypted
ids against the plaintext search, and prints the server's time by op kind (rotation, multiply, add,
other) as paper 002 profiles it, the client's steps, the end-to-end time, the message sizes and the
peak memory. Exit status 1 when the encrypted search disagrees with the plaintext one.
docs/genome_search.md explains the protocol, the encoding and what each party learns.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oboro  # noqa: E402
from oboro import bench  # noqa: E402
from genome_client import Client  # noqa: E402
from genome_db import parse_query, plaintext_search, synthetic_database  # noqa: E402
from genome_server import MAX_QUERY_SIZE, Server  # noqa: E402
from op_timer import OpTimer  # noqa: E402


def choose_query(db: np.ndarray, size: int, rng: np.random.Generator) -> dict[int, int]:
    """`size` random positions with the genotypes of a random record (so at least that record matches)."""
    if not 1 <= size <= min(MAX_QUERY_SIZE, db.shape[1]):
        raise ValueError(f"query size must be 1..{min(MAX_QUERY_SIZE, db.shape[1])}, got {size}")
    record = rng.integers(len(db))
    positions = sorted(rng.choice(db.shape[1], size, replace=False).tolist())
    return {p: int(db[record, p]) for p in positions}


def plant(db: np.ndarray, query: dict[int, int], count: int, rng: np.random.Generator) -> None:
    """Writes the queried genotypes into `count` random records (more than one match to find)."""
    rows = rng.choice(len(db), min(count, len(db)), replace=False)
    for pos, g in query.items():
        db[rows, pos] = g


def run(records: int, snps: int, query: dict[int, int] | None, query_size: int, planted: int, seed: int,
        log_n: int, progress_enabled: bool = True, progress_stream=None) -> dict:
    """Generates the database, runs client and server, returns the report (see main for its fields)."""
    rng = np.random.default_rng(seed)
    db = synthetic_database(records, snps, seed)
    query = query if query is not None else choose_query(db, query_size, rng)
    if len(query) > MAX_QUERY_SIZE:
        raise ValueError(f"at most {MAX_QUERY_SIZE} queried positions, got {len(query)}")
    if planted:
        plant(db, query, planted, rng)
    client_s: dict[str, float] = {}
    load_start = os.getloadavg()[0]
    t_start = time.perf_counter()

    t = time.perf_counter()
    client = Client(snps, log_n)
    public = client.public_context()
    client_s["keys and public context"] = time.perf_counter() - t

    timer = OpTimer()
    server = Server(db, timer)
    t = time.perf_counter()
    server.receive_context(public)
    setup_s = time.perf_counter() - t

    t = time.perf_counter()
    request = client.encrypt_query(query)
    client_s["encrypt query"] = time.perf_counter() - t

    progress = bench.Progress(server.steps(), stream=progress_stream, enabled=progress_enabled)
    server.progress = progress
    t = time.perf_counter()
    replies = server.answer(len(query), request)
    server_s = time.perf_counter() - t
    progress.close()

    t = time.perf_counter()
    found = client.matching_ids(replies, records, len(query))
    client_s["decrypt ids"] = time.perf_counter() - t
    end_to_end = time.perf_counter() - t_start

    expected = plaintext_search(db, query)
    return {
        "records": records, "snps": snps, "query": {str(p): g for p, g in query.items()}, "planted": planted,
        "seed": seed, "log_n": log_n, "slots": client.ctx.slots, "block": client.layout.block,
        "records_per_ciphertext": client.layout.per_ciphertext, "database_ciphertexts": len(server.plaintexts),
        "replies": len(replies), "threads": oboro.num_threads(),
        "found": found.tolist(), "expected": expected.tolist(), "correct": bool(np.array_equal(found, expected)),
        "margin": client.margin,
        "server_by_kind": {k: {"calls": c, "seconds": s, "share": sh} for k, c, s, sh in timer.rows()},
        "server_seconds": server_s, "server_setup_seconds": setup_s, "client_seconds": client_s,
        "end_to_end_seconds": end_to_end,
        "bytes": {"public context": len(public), "query": len(request), "replies": sum(len(r) for r in replies)},
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,  # Linux: KiB
        "load_average": {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)},  # other work on the machine
    }


def _mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def markdown(rep: dict, machine: dict) -> str:
    q = ", ".join(f"{p}:{g}" for p, g in rep["query"].items())
    lines = [
        "# Private genome search: measured run", "",
        f"Generated by `examples/genome_search/genome_search.py` on {machine['date_utc']}: {machine['cpu']}, "
        f"{machine['usable_cores']} usable cores, {rep['threads']} thread(s), Python {machine['python']}. "
        f"Load average (1 min) at the start and end: {rep['load_average']['start']:g} and {rep['load_average']['end']:g}. "
        f"Shared machines drift: the shares are steadier than the seconds.", "",
        f"{rep['records']:,} synthetic records of {rep['snps']} SNPs (seed {rep['seed']}, the query planted in "
        f"{rep['planted']} more records); query {{{q}}} ({len(rep['query'])} positions); N = 2^{rep['log_n']}, "
        f"{rep['records_per_ciphertext']} records per ciphertext in blocks of {rep['block']} slots, "
        f"{rep['database_ciphertexts']} database ciphertexts, {rep['replies']} reply ciphertext(s).", "",
        "## Server time by op kind (paper 002's profile)", "",
        "| op kind | calls | time | share |", "|---|---:|---:|---:|",
    ]
    for kind, r in rep["server_by_kind"].items():
        lines.append(f"| {kind} | {r['calls']:,} | {r['seconds']:.3f} s | {100 * r['share']:.1f} % |")
    lines += [f"| **server, one query** | | **{rep['server_seconds']:.3f} s** | |", "",
              "rotation: the block sums (`ct.sum(block=...)`, hoisted; the additions inside a sum count here) and the "
              "merge tree's rotations; multiply: the "
              "database and mask products (plaintext) and the indicator's product tree (ciphertext); add: the merge "
              "tree and the indicator's factors; other: (de)serialization. The circuit is leveled: its "
              "depth fits the parameters, so no bootstrap runs (paper 002's 35 % bootstrapping share has no "
              "counterpart here).", "",
              "## End to end", "", "| step | time |", "|---|---:|"]
    lines += [f"| client: {k} | {v:.3f} s |" for k, v in rep["client_seconds"].items()]
    lines += [f"| server: load the public context, encode the database (once per client) | {rep['server_setup_seconds']:.3f} s |",
              f"| server: answer the query | {rep['server_seconds']:.3f} s |",
              f"| **end to end** | **{rep['end_to_end_seconds']:.3f} s** |", "",
              "| message | size |", "|---|---:|"]
    lines += [f"| {k} | {_mib(v)} |" for k, v in rep["bytes"].items()]
    lines += ["", f"Peak RSS of the process (client and server together): {_mib(rep['peak_rss_bytes'])}.", "",
              f"Matching ids ({len(rep['found'])}): {', '.join(map(str, rep['found'][:20]))}{' ...' if len(rep['found']) > 20 else ''} ({'the same as' if rep['correct'] else 'DIFFERENT FROM'} the plaintext "
              f"search); largest distance of an indicator from 0 or 1: {rep['margin']:.2e}.", ""]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=5000, help="database records (default 5000)")
    p.add_argument("--snps", type=int, default=16, help="SNP positions per record (default 16)")
    p.add_argument("--query", default=None, metavar="POS:G,...", help="queried genotypes, e.g. 3:1,7:0 (default: random, see --query-size)")
    p.add_argument("--query-size", type=int, default=6, metavar="M", help=f"positions of a random query, 1..{MAX_QUERY_SIZE} (default 6)")
    p.add_argument("--plant", type=int, default=3, metavar="K", help="write the query into K more random records (default 3)")
    p.add_argument("--seed", type=int, default=7, help="seed of the database and of the random query")
    p.add_argument("--log-n", type=int, default=14, choices=(14, 15, 16), help="ring dimension log2(N) (default 14)")
    p.add_argument("--json", metavar="PATH", default=None, help="write the report as JSON")
    p.add_argument("--markdown", metavar="PATH", default=None, help="write the report as Markdown")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        query = parse_query(args.query, args.snps) if args.query else None
        rep = run(args.records, args.snps, query, args.query_size, args.plant, args.seed, args.log_n,
                  progress_enabled=not args.no_progress)
    except (ValueError, oboro.Error) as e:
        print(f"genome_search: error: {e}", file=sys.stderr)
        return 2
    machine = bench.machine_info(rep["threads"])
    md = markdown(rep, machine)
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps({"example": "genome_search", "machine": machine, **rep}, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.markdown:
        Path(args.markdown).write_text(md)
        print(f"wrote {args.markdown}")
    return 0 if rep["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
