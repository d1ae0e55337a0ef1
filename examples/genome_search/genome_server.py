"""The server of the private genome search: it holds the plaintext database and sees only bytes from
the client (a public context without the secret key, an encrypted query) and answers bytes
(encrypted match indicators). It never sees the queried positions, the genotypes asked for, or
which records match; it learns the query size m (the number of queried positions), which the
protocol makes public.

Per query (ops timed by kind with an OpTimer):
1. score_j = sum(block)(query * db_j) for each database ciphertext j: a plaintext product, then a
   rotate-and-sum inside each record's block (ct.sum(block=...), hoisted rotations) that leaves the
   number of agreeing positions in each block's first slot.
2. Per group of `block` ciphertexts: a product with the mask of the blocks' first slots, then a
   merge tree (rotate by 1, 2, 4, ... and add) that packs the group's scores into one
   ciphertext (Layout.response_slot says where each record lands).
3. The match indicator prod_{k<m} (score - k): 0 for a score in 0..m-1 (and for the masked slots),
   m! for a full match; a product tree of depth ceil(log2 m). The client divides by m!.
"""

from __future__ import annotations

import math

import numpy as np

import oboro
from genome_db import Layout, one_hot_blocks
from op_timer import OpTimer

#: the largest query the circuit's depth allows: 1 (database product) + 1 (mask) + ceil(log2 m) levels
MAX_QUERY_SIZE = 8
LEVELS = 2 + math.ceil(math.log2(MAX_QUERY_SIZE))


class Server:
    def __init__(self, db: np.ndarray, timer: OpTimer | None = None, progress=None):
        self.db = db
        self.timer = timer or OpTimer()
        self.progress = progress
        self.ctx = self.layout = self.plaintexts = None

    def receive_context(self, data: bytes) -> None:
        """Loads the client's public context and encodes the database once for it (the offline step)."""
        ctx = oboro.Context.deserialize(data)
        if ctx.has_secret_key:
            raise ValueError("the client sent its secret key: refusing it")
        if ctx.max_level < LEVELS:
            raise ValueError(f"the circuit needs {LEVELS} levels, the client's context has {ctx.max_level}")
        self.ctx, self.layout = ctx, Layout(self.db.shape[1], ctx.slots)
        self.layout.check()
        self.plaintexts = [ctx.encode(row) for row in one_hot_blocks(self.db, self.layout)]

    def answer(self, query_size: int, query: bytes) -> list[bytes]:
        """The encrypted indicators of every record, one ciphertext per group of `block` database ciphertexts."""
        if self.ctx is None:
            raise ValueError("no context: receive_context() first")
        if not 1 <= query_size <= MAX_QUERY_SIZE:
            raise ValueError(f"query size must be 1..{MAX_QUERY_SIZE}, got {query_size}")
        t = self.timer
        with t("other"):
            q = oboro.Ciphertext.deserialize(self.ctx, query)
        block, n = self.layout.block, len(self.plaintexts)
        replies = []
        for g in range(0, n, block):  # one group at a time: at most `block` score ciphertexts alive
            scores = []
            for j in range(g, min(g + block, n)):
                self._step(f"scores of database ciphertext {j + 1}/{n}")
                with t("multiply"):
                    prod = q * self.plaintexts[j]
                with t("rotation"):
                    scores.append(prod.sum(block=block))
                self._done()
            self._step(f"indicators of group {g // block + 1}")
            packed = self._pack(scores)
            indicator = self._indicator(packed, query_size)
            with t("other"):
                replies.append(indicator.serialize())
            self._done()
        return replies

    def steps(self) -> int:
        """Progress steps of one answer(): one per database ciphertext, one per group."""
        n = len(self.plaintexts)
        return n + -(-n // self.layout.block)

    def _step(self, text: str) -> None:
        if self.progress is not None:
            self.progress.start(text)

    def _done(self) -> None:
        if self.progress is not None:
            self.progress.advance()

    def _pack(self, scores: list) -> oboro.Ciphertext:
        """Keeps each block's first slot (a product with a mask encoded once), then merges: at round r,
        ciphertext 2i + 1 of the previous round rotates 2^r slots left and is added to ciphertext 2i.
        The mask products are one Ciphertext * Plaintext each: an oboro.Batch of the group measured
        4x slower here with its conversions from and to ciphertexts (Batch has no block sum) and
        2-3x the memory (docs/genome_search.md)."""
        t = self.timer
        with t("other"):
            mask = np.zeros(self.ctx.slots)
            mask[:: self.layout.block] = 1.0
            mask = self.ctx.encode(mask, level=scores[0].level)
        with t("multiply", calls=len(scores)):
            masked = [s * mask for s in scores]
        step = 1
        while len(masked) > 1:
            merged = []
            for i in range(0, len(masked), 2):
                if i + 1 == len(masked):
                    merged.append(masked[i])
                    continue
                with t("rotation"):
                    moved = masked[i + 1].rotate(step)
                with t("add"):
                    merged.append(masked[i] + moved)
            masked, step = merged, 2 * step
        return masked[0]

    def _indicator(self, s: oboro.Ciphertext, m: int) -> oboro.Ciphertext:
        """prod_{k<m} (s - k) by a balanced product tree (depth ceil(log2 m))."""
        t = self.timer
        with t("add", calls=m - 1):
            factors = [s] + [s - float(k) for k in range(1, m)]
        while len(factors) > 1:
            nxt = []
            for i in range(0, len(factors) - 1, 2):
                with t("multiply"):
                    nxt.append(factors[i] * factors[i + 1])
            if len(factors) % 2:
                nxt.append(factors[-1])
            factors = nxt
        return factors[0]
