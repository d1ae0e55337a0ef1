"""Cutting an encrypted matrix record into bands of blocks and joining bands back, on the bytes of
oboro's format (docs/serialization.md: the record header and the "encrypted matrix (v2)" payload).

Why on the bytes: the Python binding offers an EncryptedMatrix as a whole (encrypt, multiply,
serialize, deserialize) and no access to its blocks, and the block product's output blocks only
depend on one block row of A and one block column of B. The matrix record is a small layout
header followed by one complete ciphertext record per block (each with its own header and
checksum), so a band of blocks is the same layout header with the band's shape and grid,
followed by the band's block records, copied unchanged. This module writes only that outer
envelope (and its XXH64); everything it produces is then loaded with
EncryptedMatrix.deserialize, whose checks (every block's checksum, the layout's consistency, the
key id, the method's fit) run as on any untrusted input.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace

import oboro

from ._ray import INSTALL_HINT

try:
    import xxhash
except ImportError as e:
    raise ImportError(f"oboro.distributed needs xxhash to write matrix records: {INSTALL_HINT}") from e

MAGIC = b"\x89OBORO\r\n"
TYPE_MATRIX = 10
_HEADER = struct.Struct("<8sHHIQQ")  # magic, version, type, flags, context id, payload size
_LAYOUT = struct.Struct("<BQQQIIQ")  # method, rows, cols, d, grid rows, grid cols, key id
_CHECKSUM = 8


@dataclass(frozen=True)
class MatrixRecord:
    version: int
    context_id: int
    method: int
    rows: int
    cols: int
    d: int
    grid_rows: int
    grid_cols: int
    key_id: int
    blocks: tuple[bytes, ...]  # grid_rows x grid_cols ciphertext records, row-major

    def block(self, i: int, j: int) -> bytes:
        return self.blocks[i * self.grid_cols + j]


def _fail(msg: str):
    raise oboro.SerializationError(f"matrix record: {msg}")


def parse_matrix(data: bytes) -> MatrixRecord:
    """The layout and the block records of EncryptedMatrix.serialize() output; the outer checksum
    and the framing are checked here, the blocks themselves when the result is deserialized."""
    view = memoryview(data)
    if len(view) < _HEADER.size + _CHECKSUM:
        _fail(f"{len(view)} bytes is shorter than a header")
    magic, version, kind, flags, context_id, size = _HEADER.unpack_from(view, 0)
    if magic != MAGIC or kind != TYPE_MATRIX or flags != 0:
        _fail(f"not an encrypted matrix record (magic {magic!r}, type {kind}, flags {flags})")
    if _HEADER.size + size + _CHECKSUM != len(view):
        _fail(f"the header announces {size} payload bytes, {len(view) - _HEADER.size - _CHECKSUM} are there")
    end = _HEADER.size + size
    if xxhash.xxh64_intdigest(view[:end]) != int.from_bytes(view[end:], "little"):
        _fail("checksum mismatch")
    method, rows, cols, d, gr, gc, key_id = _LAYOUT.unpack_from(view, _HEADER.size)
    blocks, pos = [], _HEADER.size + _LAYOUT.size
    for _ in range(gr * gc):
        if pos + _HEADER.size > end:
            _fail(f"block {len(blocks)} of {gr * gc} is missing")
        block_size = _HEADER.size + _HEADER.unpack_from(view, pos)[5] + _CHECKSUM
        blocks.append(bytes(view[pos : pos + block_size]))
        pos += block_size
    if pos != end:
        _fail(f"{end - pos} bytes after the last block")
    return MatrixRecord(version, context_id, method, rows, cols, d, gr, gc, key_id, tuple(blocks))


def write_matrix(rec: MatrixRecord) -> bytes:
    payload = _LAYOUT.pack(rec.method, rec.rows, rec.cols, rec.d, rec.grid_rows, rec.grid_cols, rec.key_id)
    payload += b"".join(rec.blocks)
    head = _HEADER.pack(MAGIC, rec.version, TYPE_MATRIX, 0, rec.context_id, len(payload)) + payload
    return head + xxhash.xxh64_intdigest(head).to_bytes(_CHECKSUM, "little")


def band(rec: MatrixRecord, r0: int, r1: int, c0: int, c1: int) -> MatrixRecord:
    """Block rows r0..r1-1 and block columns c0..c1-1, with the true shape of that part of the
    matrix (a band at the bottom or right edge keeps the original's smaller last block)."""
    rows = min(rec.rows, rec.d * r1) - rec.d * r0
    cols = min(rec.cols, rec.d * c1) - rec.d * c0
    blocks = tuple(rec.block(i, j) for i in range(r0, r1) for j in range(c0, c1))
    return replace(rec, rows=rows, cols=cols, grid_rows=r1 - r0, grid_cols=c1 - c0, blocks=blocks)


def join(tiles: list[list[MatrixRecord]]) -> MatrixRecord:
    """The matrix whose block grid is the tiles' grids side by side (tiles[i][j]: tile row i,
    column j; the tiles of a row share their grid rows, those of a column their grid columns)."""
    first = tiles[0][0]
    grid_rows = sum(row[0].grid_rows for row in tiles)
    grid_cols = sum(t.grid_cols for t in tiles[0])
    blocks = []
    for row in tiles:
        for i in range(row[0].grid_rows):
            for t in row:
                blocks.extend(t.block(i, j) for j in range(t.grid_cols))
    rows = sum(row[0].rows for row in tiles)
    cols = sum(t.cols for t in tiles[0])
    return replace(first, rows=rows, cols=cols, grid_rows=grid_rows, grid_cols=grid_cols, blocks=tuple(blocks))
