"""Client/server example: the client keeps the secret key; the server computes on serialized,
encrypted data only, in another process.

    python examples/client_server/client.py [--preset S2] [--workdir DIR]

1. The client creates a context, generates keys (the rotations the server's sums need:
   Context.sum_rotations), and writes the context WITHOUT the secret key (context.oboro) and its encrypted
   readings (query.ct) to the work directory.
2. It runs `server.py WORKDIR` as a separate Python process. The server loads both files,
   computes the mean and the variance of the readings under encryption and writes result.ct.
3. The client loads result.ct, decrypts, and compares with NumPy.

The sizes of the exchanged files and the time of each step are printed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import oboro

HERE = Path(__file__).resolve().parent


def size(path: Path) -> str:
    b = path.stat().st_size
    return f"{b / 2**20:.2f} MiB" if b >= 2**20 else f"{b / 2**10:.1f} KiB"


def run(preset: str, workdir: Path) -> float:
    t = time.perf_counter()
    ctx = oboro.Context.from_preset(preset)
    slots = ctx.slots
    ctx.keygen(rotations=ctx.sum_rotations())  # the keys of the fastest total-sum strategy
    print(f"client: {preset} context and keys ({len(ctx.rotations)} rotation keys) in {time.perf_counter() - t:.2f} s")

    rng = np.random.default_rng()
    readings = rng.uniform(0.0, 1.0, slots)  # e.g. normalised sensor readings, one per slot
    t = time.perf_counter()
    ctx.save(workdir / "context.oboro")  # public material only: secret_key=False is the default
    ctx.encrypt(readings).save(workdir / "query.ct")
    print(f"client: wrote context.oboro ({size(workdir / 'context.oboro')}, no secret key) and query.ct "
          f"({size(workdir / 'query.ct')}, {slots} encrypted readings) in {time.perf_counter() - t:.2f} s")

    t = time.perf_counter()
    subprocess.run([sys.executable, str(HERE / "server.py"), str(workdir)], check=True)
    print(f"client: server process finished in {time.perf_counter() - t:.2f} s; result.ct is "
          f"{size(workdir / 'result.ct')}")

    result = ctx.decrypt(oboro.Ciphertext.load(ctx, workdir / "result.ct"))
    mean, variance = result[0], result[1]
    want_mean, want_var = readings.mean(), readings.var()
    err = max(abs(mean - want_mean), abs(variance - want_var))
    print(f"client: mean     {mean:.10f}  (NumPy {want_mean:.10f})")
    print(f"client: variance {variance:.10f}  (NumPy {want_var:.10f})")
    print(f"client: max error {err:.2e} (2^{np.log2(err):.1f})")
    return err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="S2", help="parameter preset with at least 3 levels (default S2)")
    parser.add_argument("--workdir", type=Path, help="directory for the exchanged files (default: a temporary one)")
    args = parser.parse_args()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        err = run(args.preset, args.workdir)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            err = run(args.preset, Path(tmp))
    if not err < 1e-5:
        sys.exit(f"client: error {err:.2e} is larger than expected")


if __name__ == "__main__":
    main()
