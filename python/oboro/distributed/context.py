"""The server-side evaluation context on a Ray cluster: put in the object store once, loaded once
per worker process.

A CKKS context's evaluation keys are large (tens of MiB from N = 2^14 on) and are the same for
every task, so they must not travel with each task. :class:`DistributedContext` serializes the
context's PUBLIC part (parameters, public, relinearization and Galois keys; never the secret key)
once with oboro's checked format, puts those bytes in Ray's object store once (``ray.put``), and
each worker process deserializes them the first time one of its tasks needs them and keeps the
context for the next tasks (:func:`load_context`, keyed by the object's id). Ray moves the bytes
to a node once (its object store is shared by the node's workers); each worker process pays one
deserialization.

The worker-side context also makes unpickling possible: oboro's Ciphertext, Batch and
EncryptedMatrix unpickle into a LIVE context with their keys (docs/serialization.md, Pickling),
so every task here loads the context first and only then fetches its encrypted inputs
(``ray.get`` inside the task; the inputs are passed as object references inside a list, which
Ray does not resolve before the task starts).

The driver keeps the caller's context (with its secret key, if it has one): results coming back
unpickle into it, so the caller decrypts them directly.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import oboro
from oboro.linalg import EncryptedMatrix

from ._ray import ray

#: contexts a worker process keeps (least recently used evicted first): a cluster usually serves one
#: context at a time, a few allow alternating between clients without reloading every time
MAX_CACHED_CONTEXTS = 4


@dataclass(frozen=True)
class _Stored:
    """What goes into the object store: the public bundle's bytes (oboro's checked format) and the
    evaluation mode (automatic or manual) the workers must use."""

    blob: bytes
    auto: bool


def identity(obj) -> tuple[int, int]:
    """(context id, key id) of an oboro Ciphertext, Batch, EncryptedMatrix or Plaintext (key id 0):
    the two ids its pickle carries to oboro._pickle.unpickle, i.e. the ids the checked loader
    matches against a context (docs/serialization.md, Pickling). A Batch is read from its first
    element and a matrix from its first block only, so the check costs one ciphertext's
    serialization."""
    if isinstance(obj, oboro.Batch):
        obj = obj[:1]
    elif isinstance(obj, EncryptedMatrix):
        obj = obj.band((0, 1), (0, 1))
    reduced = obj.__reduce__()
    _type_name, key_id, context_id, _data = reduced[1]
    return int(context_id), int(key_id)


class DistributedContext:
    """A context's public part in the Ray object store, and the options of the tasks that use it.

    ``ctx`` is the caller's context; it may hold the secret key (the driver decrypts with it),
    which is stripped before anything is shipped: what goes into the store is exactly
    ``ctx.serialize()`` (secret_key=False), and that is checked on the bytes themselves.

    ``num_cpus``: CPUs each task (and each shard server actor) asks Ray for; oboro runs that many
    threads in it. ``max_retries``: how many times Ray re-runs a task whose worker died (a task's
    own exception is deterministic and is not retried). Ray must be initialised first:
    ``ray.init()`` for a local cluster, ``ray.init(address="auto")`` or ``"ray://host:10001"`` for an
    existing one.
    """

    def __init__(self, ctx: oboro.Context, *, num_cpus: int = 1, max_retries: int = 3):
        if not isinstance(ctx, oboro.Context):
            raise TypeError(f"DistributedContext: expected an oboro.Context, got {type(ctx).__name__}")
        if not isinstance(num_cpus, int) or num_cpus < 1:
            raise oboro.InvalidArgument(f"DistributedContext: num_cpus must be an integer >= 1, got {num_cpus!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise oboro.InvalidArgument(f"DistributedContext: max_retries must be an integer >= 0, got {max_retries!r}")
        if not ray.is_initialized():
            raise oboro.InvalidArgument(
                "DistributedContext: Ray is not initialised; call ray.init() first (a local cluster), or "
                "ray.init(address=...) to use an existing one (docs/distributed.md)"
            )
        if not ctx.has_public_key:
            raise oboro.MissingKey("DistributedContext: the context has no keys yet; call keygen() first")
        public = ctx.serialize()  # secret_key=False: parameters, public, relinearization and Galois keys
        parts = [p["type"] for p in oboro.serialized_info(public)["parts"]]
        if "secret key" in parts:  # the invariant this class exists for, checked on what is shipped
            raise RuntimeError("DistributedContext: the public bundle holds a secret key; refusing to ship it")
        self.context = ctx  # driver side only: results unpickle into it
        self.ids = identity(ctx.encrypt([0.0]))  # (context id, key id) that shards must carry
        self.num_cpus = num_cpus
        self.max_retries = max_retries
        self.nbytes = len(public)  # bytes each node receives once, each worker process loads once
        self.parts = parts
        self.ref = ray.put(_Stored(public, ctx.auto))

    @property
    def handle(self) -> list:
        """What a task receives: the reference inside a list, so Ray passes it unresolved and the
        task loads the context through the per-worker cache (load_context)."""
        return [self.ref]

    def task_options(self) -> dict:
        return {"num_cpus": self.num_cpus, "max_retries": self.max_retries}

    def workers(self) -> int:
        """Tasks the cluster runs at once with these options: its CPUs / num_cpus (at least 1)."""
        return max(1, int(ray.cluster_resources().get("CPU", 1) // self.num_cpus))

    def check(self, obj, what: str) -> None:
        """ContextMismatch unless obj (Ciphertext, Batch, Plaintext) was made under this context's keys."""
        context_id, key_id = identity(obj)
        if context_id != self.ids[0] or (key_id != 0 and key_id != self.ids[1]):
            raise oboro.ContextMismatch(
                f"{what}: it belongs to another context or other keys than the DistributedContext's "
                f"(context id {context_id:#x}, key id {key_id:#x}; expected {self.ids[0]:#x}, {self.ids[1]:#x})"
            )

    # conveniences over the other modules (imported here to keep the modules independent)
    def shard(self, batch: oboro.Batch, shards: int | None = None):
        """batch split into shards in the object store: a ShardedBatch (see oboro.distributed.batch)."""
        from .batch import ShardedBatch

        return ShardedBatch.from_batch(self, batch, shards)

    def matmul(self, a, b, tiles: tuple[int, int] | None = None):
        """a @ b with the block products spread over the workers: a ShardedMatrix (oboro.distributed.matrix)."""
        from .matrix import matmul

        return matmul(self, a, b, tiles)

    def __reduce__(self):
        raise TypeError(
            "a DistributedContext stays on the driver (it holds the caller's context); tasks receive "
            "dctx.handle and call oboro.distributed.load_context(handle)"
        )

    def __repr__(self) -> str:
        return (f"<oboro.distributed.DistributedContext {self.nbytes / 2**20:.1f} MiB public "
                f"({', '.join(self.parts)}) num_cpus={self.num_cpus} max_retries={self.max_retries}>")


# ---- worker side ---------------------------------------------------------------------------------

_lock = threading.Lock()  # actors may run calls on threads; tasks run one at a time
_cache: OrderedDict[str, oboro.Context] = OrderedDict()
_loads: dict[str, int] = {}  # key -> how many times this process deserialized it (1 unless evicted)
_load_seconds: dict[str, float] = {}


def _use_assigned_cpus() -> int:
    """oboro's thread count = the CPUs Ray assigned to the running task, so that the workers of a
    node do not oversubscribe its cores (oboro's default is every hardware thread)."""
    try:
        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1)
    except AssertionError:  # not in a worker (the driver calling load_context itself)
        return oboro.num_threads()
    n = max(1, int(cpus))
    if oboro.num_threads() != n:
        oboro.set_num_threads(n)
    return n


def load_context(handle: list) -> oboro.Context:
    """The context behind ``dctx.handle``, deserialized once per worker process (checked format) and
    cached; call it at the start of a task, before any encrypted input is fetched."""
    ref = handle[0]
    key = ref.hex()
    _use_assigned_cpus()
    with _lock:
        ctx = _cache.get(key)
        if ctx is not None:
            _cache.move_to_end(key)
            return ctx
        t = time.perf_counter()
        stored: _Stored = ray.get(ref)
        ctx = oboro.Context.deserialize(stored.blob, auto=stored.auto)
        if ctx.has_secret_key:  # cannot happen with DistributedContext; refuse anything else that ships one
            raise oboro.SerializationError("load_context: the shipped context holds a secret key; refusing it")
        _cache[key] = ctx
        _loads[key] = _loads.get(key, 0) + 1
        _load_seconds[key] = time.perf_counter() - t
        while len(_cache) > MAX_CACHED_CONTEXTS:
            _cache.popitem(last=False)
        return ctx


def worker_info(handle: list) -> dict:
    """Where the running task is and what its process loaded: pid, node, oboro threads, how many
    times this process deserialized the context (1 when the cache works) and how long the last load took."""
    key = handle[0].hex()
    try:
        node = ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - outside a worker there is no node id; the info is diagnostic
        node = None
    return {"pid": os.getpid(), "node": node, "threads": oboro.num_threads(),
            "context_loads": _loads.get(key, 0), "context_load_seconds": _load_seconds.get(key, 0.0)}
