"""The server's synthetic genotype database, the slot layout both parties agree on, and the plaintext
search that the encrypted one must reproduce.

Records are genotypes at `snps` SNP positions: 0, 1 or 2 copies of the alternative allele, drawn per
position from Hardy-Weinberg frequencies with an allele frequency in [0.05, 0.5] (a seeded RNG, so
a database is reproducible). A query is a set of (position, genotype) pairs; a record matches when
it has every queried genotype (the plaintext search below).

Encoding (one-hot, many records per ciphertext): a record is 3 * snps slots, slot 3 p + g is 1 when
the record's genotype at position p is g. Each record gets a block of `block` slots (the next power
of two, so rotate-and-sum stays inside it); a ciphertext of `slots` slots holds slots / block
records. The query is the one-hot vector of its pairs (0 everywhere else), repeated in every
block; the inner product of a record's block with it counts the queried positions where the record
agrees, so the record matches exactly when that count equals the query size m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GENOTYPES = 3  # 0, 1, 2 copies of the alternative allele


@dataclass(frozen=True)
class Layout:
    """Where record r's score lands: block r % per_ciphertext of database ciphertext r // per_ciphertext."""

    snps: int
    slots: int

    @property
    def block(self) -> int:
        return 1 << (GENOTYPES * self.snps - 1).bit_length()

    @property
    def per_ciphertext(self) -> int:
        return self.slots // self.block

    def ciphertexts(self, records: int) -> int:
        return -(-records // self.per_ciphertext)

    def response_slot(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(response ciphertext, slot) of each record id. The server puts the score of record r at the
        first slot of its block, then merges each group of `block` database ciphertexts into one by
        rotating the j-th of the group j slots to the left: block b's first slot, b * block, moves to
        b * block - j (the previous block's last slots, cyclically), distinct for j < block."""
        ct, b = np.divmod(records, self.per_ciphertext)
        group, j = np.divmod(ct, self.block)
        return group, (b * self.block - j) % self.slots

    def check(self) -> None:
        if self.snps < 1 or self.block > self.slots:
            raise ValueError(f"{self.snps} SNPs need {self.block} slots per record; a ciphertext has {self.slots}")


def synthetic_database(records: int, snps: int, seed: int) -> np.ndarray:
    """(records, snps) genotypes in {0, 1, 2}, Hardy-Weinberg per position."""
    if records < 1 or snps < 1:
        raise ValueError(f"need at least one record and one SNP, got {records} records of {snps} SNPs")
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.5, snps)  # alternative allele frequency per position
    probs = np.stack([(1 - p) ** 2, 2 * p * (1 - p), p**2], axis=1)
    u = rng.random((records, snps))
    return (u[:, :, None] > np.cumsum(probs, axis=1)[None, :, :-1]).sum(axis=2).astype(np.int8)


def parse_query(text: str, snps: int) -> dict[int, int]:
    """'pos:genotype,...' -> {pos: genotype}, each pair checked."""
    query: dict[int, int] = {}
    for item in text.split(","):
        try:
            pos, g = (int(v) for v in item.split(":"))
        except ValueError:
            raise ValueError(f"query item '{item}' is not POSITION:GENOTYPE") from None
        if not 0 <= pos < snps or g not in range(GENOTYPES):
            raise ValueError(f"query item '{item}': position must be in [0, {snps}), genotype in 0..2")
        if pos in query:
            raise ValueError(f"position {pos} is queried twice")
        query[pos] = g
    return query


def plaintext_search(db: np.ndarray, query: dict[int, int]) -> np.ndarray:
    """Ids of the records with every queried genotype (the reference the encrypted search must match)."""
    pos = np.fromiter(query.keys(), dtype=np.int64)
    want = np.fromiter(query.values(), dtype=np.int8)
    return np.flatnonzero(np.all(db[:, pos] == want, axis=1))


def one_hot_blocks(db: np.ndarray, layout: Layout) -> np.ndarray:
    """(ciphertexts, slots) array: the one-hot of each record in its block, zeros in the padding."""
    records, snps = db.shape
    rows = np.zeros((layout.ciphertexts(records) * layout.per_ciphertext, layout.block))
    rows[np.arange(records)[:, None], GENOTYPES * np.arange(snps)[None, :] + db] = 1.0
    return rows.reshape(-1, layout.slots)


def query_vector(query: dict[int, int], layout: Layout) -> np.ndarray:
    """The query's one-hot, repeated in every block of a ciphertext."""
    block = np.zeros(layout.block)
    for pos, g in query.items():
        block[GENOTYPES * pos + g] = 1.0
    return np.tile(block, layout.per_ciphertext)
