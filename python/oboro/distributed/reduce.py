"""Sums of many ciphertexts: inside one Batch (a halving tree of batched additions) and across the
shards of a cluster (a tree of Ray tasks, each adding two partial sums where they are).

Why the order does not matter for the result: the additions here are of ciphertexts of one level
and one scale (callers check it), which oboro adds residue by residue modulo each prime, with
no rescaling or alignment; modular addition is associative and commutative, so every tree gives
the very words of a left-to-right ``functools.reduce(operator.add, ...)`` in one process.
"""

from __future__ import annotations

import oboro

from ._ray import ray
from .context import DistributedContext, load_context


def batch_total(batch: oboro.Batch) -> oboro.Ciphertext:
    """The sum of a Batch's elements as one Ciphertext: log2(len) batched additions of the first
    half onto the second (one call over many elements each), not len - 1 single additions."""
    while len(batch) > 1:
        half = len(batch) // 2
        summed = batch[:half] + batch[half : 2 * half]
        batch = summed if len(batch) % 2 == 0 else oboro.Batch.concat([summed, batch[2 * half :]])
    return batch[0]


@ray.remote
def _shard_total(handle: list, shard: list) -> oboro.Ciphertext:
    load_context(handle)  # before the shard is unpickled: it attaches to this context
    return batch_total(ray.get(shard[0]))


@ray.remote
def _add(handle: list, pair: list) -> oboro.Ciphertext:
    load_context(handle)
    a, b = ray.get(pair)
    return a + b


def tree_sum(dctx: DistributedContext, shard_refs: list) -> oboro.Ciphertext:
    """One ciphertext: each shard (a Batch in the object store) summed where it is, then the partial
    sums added pairwise by tasks, log2(shards) rounds, until one is left; only that one comes to
    the driver. Ray places each addition (near its inputs when it can) and retries it if its worker
    dies."""
    opts = dctx.task_options()
    level = [_shard_total.options(**opts).remote(dctx.handle, [r]) for r in shard_refs]
    while len(level) > 1:
        nxt = [_add.options(**opts).remote(dctx.handle, [level[i], level[i + 1]]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return ray.get(level[0])
