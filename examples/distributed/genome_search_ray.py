"""The private genome search of examples/genome_search, with the server's database sharded over a
Ray cluster (oboro.distributed.ShardedServer): one actor per shard runs the unchanged
genome_server.Server on its records, and the shards' replies, joined in order, are the replies
of one server over the whole database, byte for byte.

    python examples/distributed/genome_search_ray.py                    # a local 2-CPU Ray cluster
    python examples/distributed/genome_search_ray.py --address auto     # an existing cluster (ray start --head)
    python examples/distributed/genome_search_ray.py --records 40000 --shards 4 --compare

Roles: the client (genome_client.Client) holds the secret key and sends bytes only: its public
context and the encrypted query. The server side is this program's driver: it loads the public
context (it never has the secret key), puts it in the cluster's object store once
(DistributedContext), starts the shard servers and forwards the query. Exit status 1 when the
decrypted ids differ from the plaintext search (or, with --compare, when the replies differ from
the single server's), 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

GENOME_DIR = Path(__file__).resolve().parents[1] / "genome_search"
sys.path.insert(0, str(GENOME_DIR))

import oboro  # noqa: E402
from genome_client import Client  # noqa: E402
from genome_db import Layout, plaintext_search, synthetic_database  # noqa: E402
from genome_search import choose_query, plant  # noqa: E402
from genome_server import MAX_QUERY_SIZE, Server  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=16384, help="database records (default 16384: two replies of 8,192 records at 8 SNPs)")
    p.add_argument("--snps", type=int, default=8, help="SNP positions per record (default 8)")
    p.add_argument("--query-size", type=int, default=4, metavar="M", help=f"positions of a random query, 1..{MAX_QUERY_SIZE}")
    p.add_argument("--plant", type=int, default=3, metavar="K", help="write the query into K more random records")
    p.add_argument("--shards", type=int, default=None, help="database shards (default: one per worker, at most one per reply)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--log-n", type=int, default=14, choices=(14, 15, 16))
    p.add_argument("--address", default=None, help="an existing Ray cluster (e.g. auto or ray://host:10001); default: start a local one")
    p.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local cluster (default 2; not with --address)")
    p.add_argument("--compare", action="store_true", help="also answer in this process and compare the replies' bytes")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import ray

        import oboro.distributed as od
    except ImportError as e:
        print(f"genome_search_ray: {e}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    try:
        db = synthetic_database(args.records, args.snps, args.seed)
        query = choose_query(db, args.query_size, rng)
    except ValueError as e:
        print(f"genome_search_ray: error: {e}", file=sys.stderr)
        return 2
    if args.plant:
        plant(db, query, args.plant, rng)

    t = time.perf_counter()
    # working_dir: Ray ships examples/genome_search to the workers so that they can import genome_server
    runtime_env = {"working_dir": str(GENOME_DIR)}
    if args.address:
        ray.init(address=args.address, runtime_env=runtime_env, logging_level="ERROR")
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, runtime_env=runtime_env, logging_level="ERROR")
    ray_s = time.perf_counter() - t
    try:
        client = Client(args.snps, args.log_n)
        public, request = client.public_context(), client.encrypt_query(query)

        # --- the server side: bytes in, bytes out ---
        server_ctx = oboro.Context.deserialize(public)  # no secret key
        dctx = od.DistributedContext(server_ctx)
        layout = Layout(args.snps, server_ctx.slots)
        per_reply = layout.block * layout.per_ciphertext  # the records one reply ciphertext covers
        t = time.perf_counter()
        with od.ShardedServer(dctx, Server, db, args.shards, align=per_reply) as server:
            server.pids()  # wait until every shard has encoded its records
            setup_s = time.perf_counter() - t
            t = time.perf_counter()
            replies = server.answer(len(query), request)
            answer_s = time.perf_counter() - t
            bounds = server.bounds
        # --- back at the client ---
        found = client.matching_ids(replies, args.records, len(query))
        expected = plaintext_search(db, query)
        correct = bool(np.array_equal(found, expected))

        print(f"Ray: {'cluster at ' + args.address if args.address else f'local, {args.num_cpus} CPUs'} "
              f"({ray_s:.1f} s to start or connect), {int(ray.cluster_resources().get('CPU', 0))} CPUs")
        print(f"database: {args.records:,} records of {args.snps} SNPs, {len(bounds)} shards "
              f"({', '.join(f'{b - a:,}' for a, b in bounds)} records), {len(replies)} reply ciphertexts")
        print(f"public context in the object store once: {dctx.nbytes / 2**20:.1f} MiB")
        print(f"shard servers started and their records encoded: {setup_s:.2f} s")
        print(f"distributed answer: {answer_s:.2f} s")
        status = 0 if correct else 1
        if args.compare:
            single = Server(db)
            single.receive_context(public)
            t = time.perf_counter()
            want = single.answer(len(query), request)
            local_s = time.perf_counter() - t
            same = want == replies
            print(f"single-process answer ({oboro.num_threads()} threads): {local_s:.2f} s; replies "
                  f"{'bit-identical' if same else 'DIFFERENT'}")
            status = status or (0 if same else 1)
        print(f"matching ids ({len(found)}): {', '.join(map(str, found[:12]))}{' ...' if len(found) > 12 else ''} "
              f"({'the same as' if correct else 'DIFFERENT FROM'} the plaintext search)")
        return status
    finally:
        ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
