"""`oboro demo`: an end-to-end encrypted computation, timed step by step and checked against NumPy.

On random data it computes, under encryption, the mean and the variance of a vector x (sums by
rotate-and-add) and a matrix-vector product M @ v (diagonal method: sum over i of diag_i(M) times
v rotated by i), then decrypts and reports the time of each step and the maximum absolute error
of each result against NumPy. Run `oboro demo --help` for the options.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import oboro


@dataclass
class Result:
    """One encrypted computation: its name, time, output level and error against NumPy."""

    name: str
    seconds: float
    level: int
    expected: np.ndarray
    got: np.ndarray | None = None

    @property
    def max_abs_error(self) -> float:
        assert self.got is not None
        return float(np.max(np.abs(self.got - self.expected)))

    @property
    def bits(self) -> float:
        err = self.max_abs_error
        return math.inf if err == 0 else -math.log2(err)


@dataclass
class Report:
    preset: str
    params: str
    timings: dict[str, float] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)

    @property
    def max_abs_error(self) -> float:
        return max(r.max_abs_error for r in self.results)


def _fmt_time(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f} ms" if seconds < 10 else f"{seconds:9.2f} s "


def run(
    preset: str = "S2",
    size: int = 1024,
    dim: int = 8,
    seed: int | None = None,
    out: Callable[[str], None] | None = print,
) -> Report:
    """Runs the demo and returns its report; `out` receives the printed lines (None: silent)."""
    say = out or (lambda _line: None)
    if size < 2 or size & (size - 1):
        raise oboro.InvalidArgument(f"demo: size must be a power of two >= 2, got {size}")
    if dim < 2 or dim & (dim - 1):
        raise oboro.InvalidArgument(f"demo: dim must be a power of two >= 2, got {dim}")
    if seed is None:
        seed = int(np.random.default_rng().integers(2**32))
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size)
    v = rng.uniform(-1.0, 1.0, dim)
    m = rng.uniform(-1.0, 1.0, (dim, dim))

    def timed(label: str, fn, detail: str = ""):
        t0 = time.perf_counter()
        value = fn()
        dt = time.perf_counter() - t0
        report.timings[label] = dt
        say(f"  {label:<30}{_fmt_time(dt)}   {detail}".rstrip())
        return value

    say(f"oboro demo: encrypted mean, variance and matrix-vector product (CKKS, preset {preset})")
    t_total = time.perf_counter()
    t0 = time.perf_counter()
    ctx = oboro.Context.from_preset(preset)
    t_ctx = time.perf_counter() - t0
    if ctx.max_level < 2:
        raise oboro.ParameterError(
            f"demo: preset {preset} has {ctx.max_level} level(s); the demo needs 2 (use S2, S3 or S4)"
        )
    if size > ctx.slots or dim > ctx.slots:
        raise oboro.InvalidArgument(f"demo: size and dim must be <= {ctx.slots} slots for preset {preset}")
    report = Report(preset=preset, params=ctx.describe())
    for line in ctx.describe().splitlines()[:3]:
        say(line)
    say(f"data: x = {size} values uniform in [-1, 1), v = {dim} values, M = {dim}x{dim} matrix (seed {seed})")
    say("")
    say(f"  {'step':<30}{'time':>12}")
    report.timings["context"] = t_ctx
    say(f"  {'context':<30}{_fmt_time(t_ctx)}")

    # Rotation keys: powers of two below `size` for the sums, 1 .. dim-1 for the matrix product.
    steps = sorted({2**k for k in range(int(math.log2(size)))} | set(range(1, dim)))
    timed("key generation", lambda: ctx.keygen(rotations=steps), f"secret, public, relin + {len(steps)} rotation keys")
    cx = timed("encryption (x)", lambda: ctx.encrypt(x), f"{size} values, level {ctx.max_level}")
    cv = timed("encryption (v)", lambda: ctx.encrypt(v), f"{dim} values")

    results: list[tuple[Result, oboro.Ciphertext]] = []

    def compute(name: str, fn, expected) -> oboro.Ciphertext:
        t0 = time.perf_counter()
        ct = fn()
        dt = time.perf_counter() - t0
        say(f"  {name:<30}{_fmt_time(dt)}   -> level {ct.level}")
        results.append((Result(name, dt, ct.level, np.asarray(expected)), ct))
        return ct

    inv_n = 1.0 / size
    # Sum first, then scale by 1/n: the rotation noise is divided by n with the sum.
    mean = compute("mean", lambda: cx.sum() * inv_n, np.full(size, x.mean()))
    # E[x^2] - E[x]^2 (depth 2): the sum of x*x scaled by 1/n, minus the square of the encrypted mean.
    compute("variance", lambda: (cx * cx).sum() * inv_n - mean * mean, np.full(size, x.var()))

    def matvec() -> oboro.Ciphertext:
        # y = sum_i diag_i * rot(v, i), diag_i[j] = M[j, (j + i) mod dim]; rotations are cyclic
        # over the dim slots of v.
        rows = np.arange(dim)
        acc = cv * m[rows, rows]
        for i in range(1, dim):
            acc = acc + cv.rotate(i) * m[rows, (rows + i) % dim]
        return acc

    compute(f"matrix-vector ({dim}x{dim})", matvec, m @ v)

    def decrypt_all():
        for r, ct in results:
            r.got = ctx.decrypt(ct)

    timed("decryption", decrypt_all, f"{len(results)} results")
    total = time.perf_counter() - t_total
    report.timings["total"] = total
    say(f"  {'total':<30}{_fmt_time(total)}")
    say("")
    say(f"  {'result':<30}{'max abs error':>14}{'bits':>8}   first values (decrypted | NumPy)")
    for r, _ in results:
        report.results.append(r)
        assert r.got is not None
        say(
            f"  {r.name:<30}{r.max_abs_error:>14.2e}{r.bits:>8.1f}   "
            f"{r.got.ravel()[0]:+.6f} | {r.expected.ravel()[0]:+.6f}"
        )
    return report


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="oboro demo",
        description="End-to-end CKKS demo: encrypted mean, variance and matrix-vector product of random data, "
        "with the time of every step and the error against NumPy.",
    )
    p.add_argument("--preset", default="S2", help="parameter preset with >= 2 levels (default S2)")
    p.add_argument("--size", type=int, default=1024, help="length of x, a power of two (default 1024)")
    p.add_argument("--dim", type=int, default=8, help="matrix dimension, a power of two (default 8)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    p.add_argument("--threads", type=int, default=None, help="worker threads of the C++ core")
    p.add_argument(
        "--tolerance", type=float, default=1e-5, help="fail (exit 1) if an error exceeds this (default 1e-5)"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.threads:
        oboro.set_num_threads(args.threads)
    try:
        report = run(args.preset, args.size, args.dim, args.seed)
    except oboro.Error as e:
        print(f"oboro demo: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    ok = report.max_abs_error <= args.tolerance
    print()
    print(
        f"max abs error {report.max_abs_error:.2e} {'<=' if ok else '>'} tolerance {args.tolerance:.0e}: "
        f"{'OK' if ok else 'FAILED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
