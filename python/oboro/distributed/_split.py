"""How oboro.distributed cuts things into contiguous pieces: elements into shards, block rows and
columns into tiles, database rows into shards."""

from __future__ import annotations


def ranges(total: int, parts: int, align: int = 1) -> list[tuple[int, int]]:
    """`parts` contiguous (start, end) ranges covering 0..total, each starting at a multiple of
    `align`, as equal as whole units of `align` allow (the first ones one unit larger). The caller
    checks 1 <= parts <= ceil(total / align), so that no range is empty."""
    units = -(-total // align)
    q, r = divmod(units, parts)
    out, start = [], 0
    for i in range(parts):
        end = min(total, start + (q + (1 if i < r else 0)) * align)
        out.append((start, end))
        start = end
    return out
