"""Block matrix products of EncryptedMatrix spread over a Ray cluster.

oboro.linalg's block product (src/oboro/algorithms/matmul_block.hpp) computes
C_ij = sum_l A_il (x) B_lj over a grid of gm x gk times gk x gn blocks: each input block is
transformed once, the gk products of an output block are accumulated and relinearized once. An
output block needs only block row i of A and block column j of B, so the output grid is cut into
tiles of whole blocks, and tile (I, J) = A[rows of I] @ B[columns of J] is computed by one task
with that very product (``oboro.linalg.matmul`` on the bands): every output block is computed
by the same operations in the same order as in one process, so the result is bit-identical.

The cost of cutting: a tile transforms its own A band and B band, so with tr x tc tiles the A
blocks are transformed tc times and the B blocks tr times in all (one process: once each). The
default tiling (choose_tiles) weighs that against the parallelism; docs/distributed.md has the
model and the measurements.

    C = dctx.matmul(eA, eB)            # a ShardedMatrix: tiles in the object store
    ctx.decrypt(C.collect())           # one EncryptedMatrix on the driver
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import oboro
from oboro.linalg import EncryptedMatrix

from ._ray import ray
from ._split import ranges
from .context import DistributedContext, identity, load_context

# Relative costs used to choose a tiling, in key switches per block (the order of magnitude of
# matmul_block.hpp's cost model for the 3-D and Jiang bases: an input block's transform is a few
# hoisted rotation sums, an output block's finish a relinearization and a shift sum, the product of
# two transformed blocks a few key-switch-free multiplications).
TRANSFORM_COST = 2.0
PRODUCT_COST = 0.25
FINISH_COST = 1.0


def tile_cost(rows: int, inner: int, cols: int) -> float:
    """Estimated cost of one tile of rows x cols output blocks over `inner` block columns of A."""
    return TRANSFORM_COST * inner * (rows + cols) + rows * cols * (PRODUCT_COST * inner + FINISH_COST)


def choose_tiles(gm: int, gk: int, gn: int, workers: int) -> tuple[int, int]:
    """The tiling (block-row bands, block-column bands) of a gm x gn output grid with the smallest
    estimated time on `workers` parallel workers: tiles run in rounds of `workers`, and each tile
    costs tile_cost of its largest part. Ties go to fewer tiles (less data moved)."""
    best = None
    for tr in range(1, gm + 1):
        for tc in range(1, gn + 1):
            if tr * tc > max(workers, 1) * 2:  # more than two rounds never pays in this model
                continue
            rounds = math.ceil(tr * tc / max(workers, 1))
            t = rounds * tile_cost(math.ceil(gm / tr), gk, math.ceil(gn / tc))
            key = (t, tr * tc)
            if best is None or key < best[0]:
                best = (key, (tr, tc))
    return best[1]


@ray.remote
def _tile(handle: list, bands: list) -> EncryptedMatrix:
    """One tile: the A band times the B band with oboro.linalg's product. The bands are fetched
    after the context is loaded: they unpickle into it (checked loads of their records)."""
    load_context(handle)
    a, b = ray.get(bands)
    return a @ b


@dataclass
class ShardedMatrix:
    """The product's tiles in the object store: tiles[I][J] is the record of the block rows
    row_bounds[I] and block columns col_bounds[J] of the result. collect() joins them."""

    dctx: DistributedContext
    shape: tuple[int, int]
    row_bounds: list[tuple[int, int]]
    col_bounds: list[tuple[int, int]]
    tiles: list[list]  # ObjectRefs of the tiles (EncryptedMatrix)

    @property
    def tiling(self) -> tuple[int, int]:
        return len(self.row_bounds), len(self.col_bounds)

    def collect(self) -> EncryptedMatrix:
        """The whole product as one EncryptedMatrix on the driver (the tiles unpickle into the
        driver's context with the checked loader, then their block grids are joined)."""
        return EncryptedMatrix.join([ray.get(row) for row in self.tiles])


def _check_operands(dctx: DistributedContext, a: EncryptedMatrix, b: EncryptedMatrix) -> None:
    """The errors of oboro.linalg.matmul, raised before any task runs (a task would raise them too)."""
    for name, m in (("A", a), ("B", b)):
        if identity(m) != dctx.ids:
            raise oboro.ContextMismatch(f"distributed matmul: operand '{name}' belongs to another context or other "
                                        f"keys than the DistributedContext's")
    if a.shape[1] != b.shape[0]:
        raise oboro.InvalidArgument(f"distributed matmul: shapes {a.shape} and {b.shape} do not match "
                               f"({a.shape[1]} != {b.shape[0]})")
    if a.method != b.method or a.d != b.d:
        raise oboro.InvalidArgument(f"distributed matmul: operand 'A' is method '{a.method}' with d = {a.d}, operand 'B' "
                               f"'{b.method}' with d = {b.d}; encrypt both alike")


def matmul(dctx: DistributedContext, a: EncryptedMatrix, b: EncryptedMatrix,
           tiles: tuple[int, int] | None = None) -> ShardedMatrix:
    """a @ b as tiles computed by Ray tasks; ``tiles=(tr, tc)`` cuts the output's block grid into tr
    block-row bands and tc block-column bands (default: choose_tiles for the cluster's workers)."""
    for name, m in (("A", a), ("B", b)):
        if not isinstance(m, EncryptedMatrix):
            raise TypeError(f"distributed matmul: operand '{name}' is a {type(m).__name__}, not an EncryptedMatrix")
    _check_operands(dctx, a, b)
    (gm, gk), gn = a.grid, b.grid[1]
    if tiles is None:
        tr, tc = choose_tiles(gm, gk, gn, dctx.workers())
    else:
        try:
            tr, tc = (int(t) for t in tiles)
        except (TypeError, ValueError):
            raise TypeError(f"distributed matmul: tiles must be a pair of integers, got {tiles!r}") from None
        if not (1 <= tr <= gm and 1 <= tc <= gn):
            raise oboro.InvalidArgument(f"distributed matmul: tiles {tiles} for an output grid of {gm} x {gn} blocks; "
                                   f"each count must be in 1..{gm} and 1..{gn}")
    row_bounds, col_bounds = ranges(gm, tr), ranges(gn, tc)
    # each band is put once (pickled as its checked record; fresh blocks as their seeds, half the
    # bytes) and read by every tile that needs it (Ray moves it to those nodes)
    a_bands = [ray.put(a.band((r0, r1), (0, gk))) for r0, r1 in row_bounds]
    b_bands = [ray.put(b.band((0, gk), (c0, c1))) for c0, c1 in col_bounds]
    opts = dctx.task_options()
    refs = [[_tile.options(**opts).remote(dctx.handle, [ab, bb]) for bb in b_bands] for ab in a_bands]
    return ShardedMatrix(dctx, (a.shape[0], b.shape[1]), row_bounds, col_bounds, refs)
