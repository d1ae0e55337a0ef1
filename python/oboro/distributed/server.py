"""A server over a sharded database: one Ray actor per shard, each running an unchanged
single-process server on its rows.

A server that encodes its database for a client's context (the offline step) and then answers
queries is stateful: its encoded shard should stay in memory between queries, next to the
evaluation keys. That is what a Ray actor is. ShardedServer cuts the database's rows into
contiguous shards (at multiples of ``align`` rows, so that each shard's answer is a whole part of
the single server's answer), starts one actor per shard that builds ``factory(rows)`` and gives
it the client's public context as the bytes a client sends (``receive_context(bytes)``), and
forwards each query to every shard, concatenating the per-shard answers in shard order.

The genome search of examples/genome_search is such a server (genome_server.Server); with
``align`` = the records one reply ciphertext covers (its Layout: ``slots`` records), the
concatenated replies are the single server's replies byte for byte (examples/distributed/).

Ray restarts an actor whose process dies (``max_restarts``: its constructor runs again, from the
shard and the context still in the object store) and retries the call that was running
(``max_task_retries``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import oboro

from ._ray import ray
from ._split import ranges
from .context import DistributedContext


class _ShardServer:
    """The actor: one shard's server. Its process holds the shard's encoded data and the keys."""

    def __init__(self, factory: Callable, rows_ref: list, handle: list, threads: int):
        oboro.set_num_threads(threads)  # the CPUs Ray reserved for this actor, not every core of the node
        stored = ray.get(handle[0])  # the public bundle, once per actor
        rows = ray.get(rows_ref[0])
        self.server = factory(rows)
        self.server.receive_context(stored.blob)
        self.rows = len(rows)

    def call(self, method: str, args: tuple, kwargs: dict):
        return getattr(self.server, method)(*args, **kwargs)

    def pid(self) -> int:
        import os

        return os.getpid()


class ShardedServer:
    """``factory(rows)`` on each shard of ``database`` (anything with len() and row slicing, e.g. a
    NumPy array), as Ray actors.

    - ``shards``: number of shards (default: the cluster's workers for dctx.num_cpus each);
      ``align``: shard boundaries fall on multiples of it (e.g. the rows one reply covers).
    - ``runtime_env``: Ray's runtime environment of the actors (env_vars, pip, remote URIs). The
      workers must be able to import the module that defines ``factory`` (cloudpickle sends a
      class by reference): a local directory of code is given to the whole job instead, as
      ``ray.init(runtime_env={"working_dir": ...})`` (Ray uploads it to every node), which is what
      examples/distributed/ does for genome_server.
    - Each actor reserves ``dctx.num_cpus`` CPUs while it lives: ``shutdown()`` (or ``with``)
      gives them back.
    """

    def __init__(self, dctx: DistributedContext, factory: Callable, database, shards: int | None = None, *,
                 align: int = 1, runtime_env: dict | None = None):
        if not callable(factory):
            raise TypeError(f"ShardedServer: factory must be callable, got {type(factory).__name__}")
        if isinstance(align, bool) or not isinstance(align, (int, np.integer)) or align < 1:
            raise oboro.InvalidArgument(f"ShardedServer: align must be an integer >= 1, got {align!r}")
        records = len(database)
        if records < 1:
            raise oboro.InvalidArgument("ShardedServer: the database is empty")
        units = -(-records // align)
        n = dctx.workers() if shards is None else shards
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"ShardedServer: shards must be an integer, got {type(n).__name__}")
        if shards is None:
            n = min(n, units)
        if not 1 <= n <= units:
            raise oboro.InvalidArgument(f"ShardedServer: {n} shards of {records} rows aligned to {align}: use 1..{units} "
                                   f"(each shard holds whole units of {align} rows)")
        self.dctx = dctx
        self.bounds = ranges(records, int(n), int(align))
        opts = {"num_cpus": dctx.num_cpus, "max_restarts": dctx.max_retries, "max_task_retries": dctx.max_retries}
        if runtime_env is not None:
            opts["runtime_env"] = runtime_env
        actor = ray.remote(_ShardServer).options(**opts)
        # Each shard's rows are put in the object store once and held here, so that an actor that Ray
        # restarts reads them again from there (passed inside a list: a reference Ray does not resolve).
        self.rows = [ray.put(database[a:b]) for a, b in self.bounds]
        self.actors = [actor.remote(factory, [r], dctx.handle, dctx.num_cpus) for r in self.rows]

    @property
    def shards(self) -> int:
        return len(self.actors)

    def call(self, method: str, *args, **kwargs) -> list:
        """server.method(*args, **kwargs) on every shard at once; the results in shard order. The
        arguments are put in the object store once for all shards."""
        if not self.actors:
            raise oboro.InvalidArgument("ShardedServer: shut down")
        args_ref, kwargs_ref = ray.put(args), ray.put(kwargs)
        return ray.get([a.call.remote(method, args_ref, kwargs_ref) for a in self.actors])

    def answer(self, *args, **kwargs) -> list:
        """The shards' answer(...) lists joined in shard order: the single server's answer when each
        shard's answer is its part of it (aligned shards)."""
        parts = self.call("answer", *args, **kwargs)
        for i, p in enumerate(parts):
            if not isinstance(p, Sequence) or isinstance(p, (bytes, str)):
                raise TypeError(f"ShardedServer.answer: shard {i} answered a {type(p).__name__}, not a list")
        return [item for part in parts for item in part]

    def pids(self) -> list[int]:
        """The process id of each shard's actor (they change when Ray restarts one)."""
        return ray.get([a.pid.remote() for a in self.actors])

    def shutdown(self) -> None:
        for a in self.actors:
            ray.kill(a)
        self.actors, self.rows = [], []

    def __enter__(self) -> ShardedServer:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
