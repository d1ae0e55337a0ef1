"""ShardedBatch: an oboro.Batch split into shards that live in Ray's object store and are evaluated
where they are.

    sb = dctx.shard(batch, shards=4)          # 4 Batches in the object store
    y = (sb * sb + 0.5 * sb).rotate(1)        # one task per shard per operation; y stays distributed
    z = y.map(oboro.functions.sigmoid, interval=(-8, 8), degree=63)   # any function of a Batch
    ctx.decrypt(z.collect())                  # one oboro.Batch on the driver
    total = y.sum()                           # the sum of all elements: one Ciphertext

Every operation is one Ray task per shard that loads the context (once per worker process, see
context.py), fetches its shard, runs the very oboro code a single process runs on that Batch, and
puts the result back in the store; nothing comes to the driver until collect() or sum(). The
shards travel as oboro's checked records (Batch.__reduce__: serialize() plus the key id), never as
raw memory.

Results are bit-identical to the single process: a batched operation computes each element
independently, so op(batch)[a:b] is op(batch[a:b]) word for word, and collect() concatenates the
shards in order.

Ray does the placement, the data movement and the retries: a task whose worker dies is re-run by
Ray (``max_retries``), from the shard still in the object store. Errors raised by a function are
deterministic, are not retried, and surface (as Ray's wrapper of the original oboro error) when
the result is needed: collect(), sum(), lengths.
"""

from __future__ import annotations

import operator
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import oboro

from ._ray import ray
from ._split import ranges
from .context import DistributedContext, load_context, worker_info
from .reduce import tree_sum


@dataclass(frozen=True)
class _Shard:
    """Placeholder in a map's arguments: the shard of the i-th ShardedBatch operand."""

    index: int


@dataclass(frozen=True)
class _Rows:
    """Placeholder: this task's rows of a per-element argument (one row per element of the batch)."""

    index: int


def _meta(batch: oboro.Batch) -> dict:
    return {"length": len(batch), "level": batch.level, "scale": batch.scale, "poly_count": batch.poly_count,
            "element_shape": tuple(batch.element_shape), "dtype": str(batch.dtype)}


def _resolve(value, shards: list, rows: list):
    if isinstance(value, _Shard):
        return shards[value.index]
    if isinstance(value, _Rows):
        return rows[value.index]
    return value


@ray.remote(num_returns=2)
def _map_shard(handle: list, spec: list, shard_refs: list, rows: list):
    """One shard of a map: the context first (so that the shards can be unpickled), then the
    function and its broadcast arguments (put once for all shards), then this task's shards."""
    load_context(handle)
    fn, args, kwargs = ray.get(spec[0])
    shards = ray.get(shard_refs)
    out = fn(*(_resolve(a, shards, rows) for a in args), **kwargs)
    if not isinstance(out, oboro.Batch):
        name = getattr(fn, "__name__", repr(fn))
        raise TypeError(f"ShardedBatch.map: {name} returned {type(out).__name__}, not an oboro.Batch")
    return out, {**_meta(out), "worker": worker_info(handle)}


def _check_shard_count(shards, length: int, what: str) -> int:
    if isinstance(shards, bool) or not isinstance(shards, (int, np.integer)):
        raise TypeError(f"{what}: shards must be an integer, got {type(shards).__name__}")
    if shards < 1:
        raise oboro.InvalidArgument(f"{what}: shards must be at least 1, got {shards}")
    if shards > length:
        raise oboro.InvalidArgument(f"{what}: {shards} shards of a batch of {length} elements would leave some empty; "
                               f"use at most {length}")
    return int(shards)


class ShardedBatch:
    """An oboro.Batch as shards in Ray's object store, in order. Make one with
    :meth:`from_batch` (or ``dctx.shard(batch, shards)``) or :meth:`from_batches`; operations
    return a new ShardedBatch without waiting for the tasks."""

    def __init__(self, dctx: DistributedContext, refs: list, metas: list, lengths: list[int] | None):
        # refs: one ObjectRef per shard (a Batch); metas: a dict per shard, or the ObjectRef of one
        # (fetched on demand); lengths: known without waiting (operators keep them) or None.
        self.dctx = dctx
        self.refs = list(refs)
        self._metas = list(metas)
        self._lengths = lengths

    # ---- construction -------------------------------------------------------------------------

    @classmethod
    def from_batch(cls, dctx: DistributedContext, batch: oboro.Batch, shards: int | None = None) -> ShardedBatch:
        """batch cut into ``shards`` contiguous pieces of nearly equal length (default: as many as the
        cluster runs tasks at once), each put in the object store."""
        if not isinstance(batch, oboro.Batch):
            raise TypeError(f"ShardedBatch.from_batch: expected an oboro.Batch, got {type(batch).__name__}")
        dctx.check(batch, "ShardedBatch.from_batch")
        if shards is None:
            shards = min(dctx.workers(), len(batch))
        n = _check_shard_count(shards, len(batch), "ShardedBatch.from_batch")
        pieces = [batch if (a, b) == (0, len(batch)) else batch[a:b] for a, b in ranges(len(batch), n)]
        return cls._put(dctx, pieces)

    @classmethod
    def from_batches(cls, dctx: DistributedContext, batches: Sequence[oboro.Batch]) -> ShardedBatch:
        """Batches that are already the shards (e.g. encrypted by several parties under the same
        keys): they must share the context, level, scale and element shape, as the rows of one
        Batch do."""
        batches = list(batches)
        if not batches:
            raise oboro.InvalidArgument("ShardedBatch.from_batches: no batches (a ShardedBatch has at least one shard)")
        for i, b in enumerate(batches):
            if not isinstance(b, oboro.Batch):
                raise TypeError(f"ShardedBatch.from_batches: shard {i} is a {type(b).__name__}, not an oboro.Batch")
            dctx.check(b, f"ShardedBatch.from_batches: shard {i}")
        _check_alike([_meta(b) for b in batches], "ShardedBatch.from_batches")
        return cls._put(dctx, batches)

    @classmethod
    def _put(cls, dctx: DistributedContext, pieces: list) -> ShardedBatch:
        return cls(dctx, [ray.put(p) for p in pieces], [_meta(p) for p in pieces], [len(p) for p in pieces])

    # ---- what it holds ------------------------------------------------------------------------

    @property
    def shards(self) -> int:
        return len(self.refs)

    def metas(self) -> list[dict]:
        """Per shard: length, level, scale, poly_count, element_shape, dtype and, for results of
        tasks, ``worker`` (pid, node, threads, context_loads: how many times that worker process
        loaded the context, 1 with the cache). Waits for the tasks."""
        pending = [i for i, m in enumerate(self._metas) if not isinstance(m, dict)]
        if pending:
            for i, m in zip(pending, ray.get([self._metas[i] for i in pending])):
                self._metas[i] = m
        return list(self._metas)

    @property
    def lengths(self) -> list[int]:
        if self._lengths is None:
            self._lengths = [m["length"] for m in self.metas()]
        return list(self._lengths)

    def __len__(self) -> int:
        return sum(self.lengths)

    def __repr__(self) -> str:
        known = self._lengths if self._lengths is not None else "pending"
        return f"<oboro.distributed.ShardedBatch shards={self.shards} lengths={known}>"

    # ---- evaluation -----------------------------------------------------------------------------

    def map(self, fn: Callable[..., oboro.Batch], *args, **kwargs) -> ShardedBatch:
        """fn(shard, *args, **kwargs) on every shard, where it is; fn must return an oboro.Batch.
        An argument that is a ShardedBatch with the same shard lengths is replaced by its shard (so
        ``a.map(operator.mul, b)`` multiplies element by element); any other argument (numbers,
        arrays, Plaintexts, ...) goes to every shard, put in the object store once. fn and its
        arguments must pickle (a module-level function, functools.partial, operator.methodcaller)."""
        return self._map(fn, args, kwargs, rows=None, keeps_length=False)

    def _map(self, fn, args: Sequence, kwargs: dict, rows: np.ndarray | None, keeps_length: bool) -> ShardedBatch:
        if not callable(fn):
            raise TypeError(f"ShardedBatch.map: fn must be callable, got {type(fn).__name__}")
        operands, template = [self], [_Shard(0)]
        for a in args:
            if isinstance(a, ShardedBatch):
                self._check_aligned(a)
                template.append(_Shard(len(operands)))
                operands.append(a)
            else:
                template.append(a)
        for k, v in kwargs.items():
            if isinstance(v, ShardedBatch):
                raise TypeError(f"ShardedBatch.map: keyword argument '{k}' is a ShardedBatch; pass it positionally")
        per_shard_rows: list[list] = [[] for _ in range(self.shards)]
        if rows is not None:  # one row per element: each task gets its own rows
            template.append(_Rows(0))
            bounds = np.cumsum([0] + self.lengths)
            for i in range(self.shards):
                per_shard_rows[i].append(rows[bounds[i] : bounds[i + 1]])
        try:
            spec = ray.put((fn, tuple(template), kwargs))
        except (TypeError, AttributeError, pickle.PicklingError) as e:
            raise TypeError(f"ShardedBatch.map: the function or its arguments do not pickle ({e}); use a module-level "
                            f"function, functools.partial or operator.methodcaller (methods of oboro's classes "
                            f"themselves do not pickle)") from e
        opts = self.dctx.task_options()
        refs, metas = [], []
        for i in range(self.shards):
            out, meta = _map_shard.options(**opts).remote(self.dctx.handle, [spec], [op.refs[i] for op in operands],
                                                          per_shard_rows[i])
            refs.append(out)
            metas.append(meta)
        return ShardedBatch(self.dctx, refs, metas, self._lengths if keeps_length else None)

    def _check_aligned(self, other: ShardedBatch) -> None:
        if other.dctx.ids != self.dctx.ids:
            raise oboro.ContextMismatch("ShardedBatch: the operands belong to different contexts or keys")
        if other.shards != self.shards or other.lengths != self.lengths:
            raise oboro.InvalidArgument(f"ShardedBatch: operands sharded differently ({self.lengths} and {other.lengths} "
                                   f"elements per shard); shard them alike")

    def collect(self) -> oboro.Batch:
        """The shards, fetched and joined in order into one oboro.Batch (attached to the driver's
        context, which can decrypt it)."""
        parts = ray.get(self.refs)
        return parts[0] if len(parts) == 1 else oboro.Batch.concat(parts)

    def sum(self) -> oboro.Ciphertext:
        """The sum of ALL elements (across shards) as one Ciphertext: each shard summed where it is,
        then a tree of additions through Ray tasks (reduce.py). For the rotate-and-sum inside each
        element (Batch.sum), map it: ``sb.map(operator.methodcaller("sum", block=8))``. The shards must share level
        and scale (then the result is the words of a single process's left-to-right sum)."""
        _check_alike(self.metas(), "ShardedBatch.sum")
        return tree_sum(self.dctx, self.refs)

    # ---- the Batch operators, shard by shard ----------------------------------------------------

    def _binary(self, op, other) -> ShardedBatch:
        if isinstance(other, ShardedBatch):
            return self._map(op, (other,), {}, None, keeps_length=True)
        if isinstance(other, (oboro.Batch, oboro.Ciphertext)):
            raise TypeError(f"ShardedBatch: the operand is an oboro.{type(other).__name__}; shard it like this "
                            f"one (dctx.shard) or put it in a ShardedBatch")
        if isinstance(other, oboro.Plaintext):
            self.dctx.check(other, "ShardedBatch operand")
        rows = self._rows_of(other)
        if rows is not None:  # an array of the whole batch's shape: row i goes with element i
            return self._map(_apply_rows, (op,), {}, rows, keeps_length=True)
        return self._map(op, (other,), {}, None, keeps_length=True)

    def _rows_of(self, other) -> np.ndarray | None:
        """`other` as one row per element when it has the whole batch's shape (len, *element_shape),
        as Batch operands may; None when it goes to every element alike."""
        if isinstance(other, (int, float, complex, np.number, oboro.Plaintext)):
            return None
        arr = np.asarray(other)
        if arr.ndim == 0 or arr.shape[0] != len(self):
            return None
        # only now the element shape is needed: for the results of maps it waits for the tasks
        return arr if arr.shape == (len(self), *self.metas()[0]["element_shape"]) else None

    def __add__(self, other):
        return self._binary(operator.add, other)

    def __radd__(self, other):
        return self._binary(_swap(operator.add), other)

    def __sub__(self, other):
        return self._binary(operator.sub, other)

    def __rsub__(self, other):
        return self._binary(_swap(operator.sub), other)

    def __mul__(self, other):
        return self._binary(operator.mul, other)

    def __rmul__(self, other):
        return self._binary(_swap(operator.mul), other)

    def __truediv__(self, other):
        return self._binary(operator.truediv, other)

    def __neg__(self):
        return self._map(operator.neg, (), {}, None, keeps_length=True)

    def rotate(self, steps: int | Sequence[int]) -> ShardedBatch:
        """Batch.rotate on every shard: one step for all elements, or one step per element."""
        if isinstance(steps, (int, np.integer)):
            return self._map(operator.methodcaller("rotate", int(steps)), (), {}, None, keeps_length=True)
        steps = np.asarray(steps, dtype=np.int64)
        if steps.shape != (len(self),):
            raise oboro.InvalidArgument(f"ShardedBatch.rotate: {steps.shape[0] if steps.ndim == 1 else steps.shape} steps "
                                   f"for {len(self)} elements; give one step or one per element")
        return self._map(_rotate_rows, (), {}, steps, keeps_length=True)

    def _method(self, name: str, *args, **kwargs) -> ShardedBatch:
        return self._map(operator.methodcaller(name, *args, **kwargs), (), {}, None, keeps_length=True)

    def conj(self) -> ShardedBatch:
        return self._method("conj")

    def relinearize(self) -> ShardedBatch:
        return self._method("relinearize")

    def rescale(self) -> ShardedBatch:
        return self._method("rescale")

    def drop_to_level(self, level: int) -> ShardedBatch:
        return self._method("drop_to_level", level)

    def polyval(self, coeffs, **kwargs) -> ShardedBatch:
        """Batch.polyval on every shard (same keywords: basis, interval, level, scale)."""
        return self._method("polyval", np.asarray(coeffs), **kwargs)


class _swap:
    """op with its operands swapped (2.0 - sb is sub(2.0, shard)); a class, not a lambda, so it pickles."""

    def __init__(self, op):
        self.op = op
        self.__name__ = f"swapped {getattr(op, '__name__', op)}"

    def __call__(self, a, b):
        return self.op(b, a)


def _apply_rows(shard: oboro.Batch, op, rows: np.ndarray) -> oboro.Batch:
    return op(shard, rows)


def _rotate_rows(shard: oboro.Batch, steps: np.ndarray) -> oboro.Batch:
    return shard.rotate([int(s) for s in steps])


def _check_alike(metas: list[dict], what: str) -> None:
    """The shards must be like the rows of one Batch (collect and sum need it): typed errors naming
    the first shard that differs from shard 0."""
    first = metas[0]
    for i, m in enumerate(metas[1:], start=1):
        if m["level"] != first["level"] or m["poly_count"] != first["poly_count"]:
            raise oboro.LevelMismatch(f"{what}: shard {i} is at level {m['level']} with {m['poly_count']} "
                                      f"polynomials, shard 0 at level {first['level']} with {first['poly_count']}")
        if m["scale"] != first["scale"]:
            raise oboro.ScaleMismatch(f"{what}: shard {i} has scale {m['scale']!r}, shard 0 {first['scale']!r}")
        if tuple(m["element_shape"]) != tuple(first["element_shape"]):
            raise oboro.InvalidArgument(f"{what}: shard {i} holds elements of shape {tuple(m['element_shape'])}, "
                                   f"shard 0 of {tuple(first['element_shape'])}")
