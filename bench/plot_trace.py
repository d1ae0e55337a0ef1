#!/usr/bin/env python3
"""Plots paper 004's trace experiment from the JSON of bench_trace: the speed-up of the hoisted,
unrolled rotate-and-sum over repeated doubling against the number of iterations h, one line per
(special primes k, level l), one panel per (threads, kernels). Exits cleanly (status 0, a message)
when matplotlib is not installed.

usage: plot_trace.py RESULTS.json [--out docs/benchmarks/trace.png]
"""
import sys

from plot_util import finish, start


def speedups(rows, threads, simd):
    """{(k, l): [(h, doubling_us / hoisted_us), ...]} for one panel."""
    cells = {}
    for r in rows:
        if r["threads"] != threads or r["simd"] != simd:
            continue
        cells.setdefault((r["k"], r["l"]), {})[r["h"] if r["strategy"] == "hoisted" else 0] = r["us"]
    out = {}
    for key, by_h in cells.items():
        if by_h.get(0):
            out[key] = sorted((h, by_h[0] / us) for h, us in by_h.items() if h > 0 and us)  # us None: N/A
    return out


def main():
    started = start(__doc__, "plot_trace.py", "docs/benchmarks/trace.png")
    if started is None:
        return 0
    res, out, plt = started
    rows = res["trace"]
    panels = sorted({(r["threads"], r["simd"]) for r in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4), sharey=True, squeeze=False)
    for ax, (threads, simd) in zip(axes[0], panels):
        for (k, l), points in sorted(speedups(rows, threads, simd).items()):
            ax.plot([h for h, _ in points], [s for _, s in points], marker=".", label=f"k={k}, l={l}")
        ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
        ax.set_title(f"{threads} thread{'s' if threads > 1 else ''}, {'SIMD' if simd else 'scalar'} kernels", fontsize=9)
        ax.set_xlabel("iterations h (unrolled hoisting)")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("speed-up over repeated doubling")
    axes[0][-1].legend(fontsize=7)
    return finish(fig, res, "rotate-and-sum, logN 15, M = 7", out, "plot_trace.py")


if __name__ == "__main__":
    sys.exit(main())
