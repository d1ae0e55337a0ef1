"""Wall-clock time by op kind, as paper 002 profiles its genome search (rotation, multiply, add, other)."""

from __future__ import annotations

import time
from contextlib import contextmanager

KINDS = ("rotation", "multiply", "add", "other")


class OpTimer:
    """`with timer("rotation", calls=3): ...` adds the block's time and call count to that kind."""

    def __init__(self):
        self.seconds = dict.fromkeys(KINDS, 0.0)
        self.calls = dict.fromkeys(KINDS, 0)

    @contextmanager
    def __call__(self, kind: str, calls: int = 1):
        if kind not in self.seconds:
            raise ValueError(f"unknown op kind '{kind}' (kinds: {', '.join(KINDS)})")
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[kind] += time.perf_counter() - t0
            self.calls[kind] += calls

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def rows(self) -> list[tuple[str, int, float, float]]:
        """(kind, calls, seconds, share of the total) per kind."""
        total = self.total or 1.0
        return [(k, self.calls[k], self.seconds[k], self.seconds[k] / total) for k in KINDS]
