"""oboro.distributed: encrypted workloads on a Ray cluster (``pip install 'oboro[ray]'``).

    import ray, oboro, oboro.distributed as od
    ray.init()                                   # or ray.init(address="auto") on an existing cluster
    dctx = od.DistributedContext(ctx)            # the public part in the object store, once
    sb = dctx.shard(ctx.encrypt_batch(X), shards=8)
    y = (sb * sb + 1.0).rotate(1)                # one task per shard; y stays in the cluster
    ctx.decrypt(y.collect())                     # an oboro.Batch on the driver
    total = y.sum()                              # all elements summed: one Ciphertext
    C = dctx.matmul(eA, eB).collect()            # block products spread over the workers
    with od.ShardedServer(dctx, Server, db, align=...) as s:   # a server per database shard
        replies = s.answer(query_size, query)

- context.py: DistributedContext (the public context put once, loaded once per worker process)
- batch.py: ShardedBatch (map, the Batch operators, collect, sum)
- reduce.py: sums of ciphertexts inside a shard and across shards (a tree of tasks)
- matrix.py: distributed block matrix products (ShardedMatrix)
- server.py: ShardedServer (one actor per database shard, e.g. the genome search server)

Ray does the placement, data movement and retries; everything encrypted travels in oboro's checked
serialization format. docs/distributed.md: usage, existing clusters, the cost model, measurements.
"""

from __future__ import annotations

from ._ray import INSTALL_HINT, ray  # noqa: F401  (fails here, with the install hint, without Ray)
from .batch import ShardedBatch
from .context import DistributedContext, load_context, worker_info
from .matrix import ShardedMatrix, choose_tiles, matmul
from .reduce import batch_total, tree_sum
from .server import ShardedServer

__all__ = [
    "DistributedContext",
    "ShardedBatch",
    "ShardedMatrix",
    "ShardedServer",
    "batch_total",
    "choose_tiles",
    "load_context",
    "matmul",
    "tree_sum",
    "worker_info",
]
