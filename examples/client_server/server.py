"""The server side of the client/server example: it never sees the secret key.

    python server.py WORKDIR

Reads WORKDIR/context.oboro (parameters and evaluation keys, no secret key) and WORKDIR/query.ct
(the client's encrypted readings, as many as the slots), computes the encrypted mean and variance
with rotate-and-sum (Ciphertext.sum: hoisted rotations, the strategy the keys allow; three
multiplicative levels), and writes WORKDIR/result.ct. Everything it reads and writes is serialized ciphertext data.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import oboro


def main(workdir: Path) -> None:
    t0 = time.perf_counter()
    ctx = oboro.Context.load(workdir / "context.oboro")
    assert not ctx.has_secret_key  # the point of the exercise
    x = oboro.Ciphertext.load(ctx, workdir / "query.ct")
    t1 = time.perf_counter()

    n = x.size  # the number of readings is public (it is in the ciphertext's shape)
    mean = x.sum() * (1.0 / n)  # E[x] in every slot
    centered = x - mean  # automatic alignment brings x down to mean's level and scale
    spread = (centered * centered).sum()  # n * Var[x] in every slot
    # One ciphertext back: slot 0 = mean, slot 1 = variance (plaintext masks select the slots).
    mask_mean = [1.0] + [0.0] * (n - 1)
    mask_var = [0.0, 1.0 / n] + [0.0] * (n - 2)
    result = mean * mask_mean + spread * mask_var
    t2 = time.perf_counter()
    result.save(workdir / "result.ct")
    print(f"server: loaded context and query in {t1 - t0:.2f} s, computed mean and variance in {t2 - t1:.2f} s "
          f"(result at level {result.level}); it holds no secret key")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
