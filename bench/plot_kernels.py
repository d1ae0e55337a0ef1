#!/usr/bin/env python3
"""Plots paper 004's experiment from the JSON of bench_kernels: time of the fused multiply-add and
of a multiply then an add against the input size, one panel per instruction set, with the
crossover marked. Exits cleanly (status 0, a message) when matplotlib is not installed.

usage: plot_kernels.py RESULTS.json [--out docs/benchmarks/kernels_fma.png]
"""
import sys

from plot_util import finish, start


def main():
    started = start(__doc__, "plot_kernels.py", "docs/benchmarks/kernels_fma.png")
    if started is None:
        return 0
    res, out, plt = started
    rows = res["fma"]["results"]
    isas = [i for i in ("scalar", "avx2", "avx512") if any(r["isa"] == i for r in rows)]
    fig, axes = plt.subplots(1, len(isas), figsize=(5 * len(isas), 4), sharey=True, squeeze=False)
    for ax, isa in zip(axes[0], isas):
        rs = sorted((r for r in rows if r["isa"] == isa), key=lambda r: r["input_bytes"])
        x = [r["input_bytes"] for r in rs]
        ax.loglog(x, [r["separate_us"] for r in rs], ".", label="multiply, then add", alpha=0.7)
        ax.loglog(x, [r["fused_us"] for r in rs], ".", label="fused multiply-add", alpha=0.7)
        c = res["fma"]["crossover_bytes"].get(isa, -1)
        if c and c > 0:
            ax.axvline(c, color="gray", linestyle="--", linewidth=1, label=f"crossover {c / 1024:.0f} KiB")
        ax.set_title(isa)
        ax.set_xlabel("input size (bytes, 64*(3Nl+l)/8)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("median time (us)")
    return finish(fig, res, "acc + a*b mod q, 60-bit primes, logN 10..15, 1..15 limbs", out, "plot_kernels.py")


if __name__ == "__main__":
    sys.exit(main())
