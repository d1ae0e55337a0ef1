"""The client of the private genome search: it holds the secret key, encrypts its query and decrypts
the ids of the matching records. It sends the server bytes only: its context WITHOUT the secret key
(public, relinearization and rotation keys) and the encrypted query; it gets bytes back.

The results stay with the client (the secret-key holder), so no noise flooding is needed for
IND-CPA-D (docs/security.md): flood with ctx.noise_flooding before sharing decryptions.
"""

from __future__ import annotations

import math

import numpy as np

import oboro
from genome_db import Layout, query_vector
from genome_server import LEVELS

#: an indicator above this (after dividing by m!) is a match; the exact values are 0 and 1
THRESHOLD = 0.5


class Client:
    def __init__(self, snps: int, log_n: int = 14):
        # [60] + LEVELS x [40] bits, one 60-bit special prime: 128-bit secure from N = 2^14 on.
        self.ctx = oboro.Context(log_n=log_n, moduli_bits=[60] + [40] * LEVELS, special_bits=[60], scale_bits=40)
        self.layout = Layout(snps, self.ctx.slots)
        self.layout.check()
        # The server's rotations: the block sums (the keys of the cost model's strategy) and the
        # merge tree's powers of two below the block size.
        merge = [1 << r for r in range(self.layout.block.bit_length() - 1)]
        self.ctx.keygen(rotations=sorted(set(self.ctx.sum_rotations(block=self.layout.block)) | set(merge)))
        self.margin = None

    def public_context(self) -> bytes:
        return self.ctx.serialize()  # secret_key=False: the default

    def encrypt_query(self, query: dict[int, int]) -> bytes:
        for pos in query:
            if not 0 <= pos < self.layout.snps:
                raise ValueError(f"queried position {pos} is not in [0, {self.layout.snps})")
        return self.ctx.encrypt(query_vector(query, self.layout)).serialize()

    def matching_ids(self, replies: list[bytes], records: int, query_size: int) -> np.ndarray:
        """Ids of the records whose indicator is 1. Also sets self.margin: the largest distance of an
        indicator from 0 or 1 (how far the noise is from the threshold 0.5)."""
        values = [self.ctx.decrypt(oboro.Ciphertext.deserialize(self.ctx, r)) / math.factorial(query_size) for r in replies]
        ids = np.arange(records)
        group, slot = self.layout.response_slot(ids)
        if len(values) != group.max() + 1:
            raise ValueError(f"expected {group.max() + 1} replies for {records} records, got {len(values)}")
        indicator = np.stack(values)[group, slot]
        self.margin = float(np.max(np.minimum(np.abs(indicator), np.abs(indicator - 1))))
        return ids[indicator > THRESHOLD]
