#!/usr/bin/env python3
"""Plots the batched-evaluation benchmark (paper 000, Tables 5/6 in spirit) from the JSON of
bench_batch: the time per ciphertext of (a) the allocating loop of single ops, (b) the loop into
preallocated outputs and (c) one batched call, against d, one panel per (operation, threads), log
scales. Exits cleanly (status 0, a message) when matplotlib is not installed.

usage: plot_batch.py RESULTS.json [--out docs/benchmarks/batch.png]
"""
import argparse
import json
import pathlib
import sys

WAYS = [
    ("loop_allocating_us", "(a) loop, allocating"),
    ("loop_into_us", "(b) loop, into outputs"),
    ("batched_us", "(c) batched"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--out", default="docs/benchmarks/batch.png")
    args = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_batch.py: matplotlib is not installed; no plot written")
        return 0
    res = json.loads(pathlib.Path(args.results).read_text())
    rows = res["rows"]
    ops = list(dict.fromkeys(r["op"] for r in rows))
    threads = sorted({r["threads"] for r in rows})
    fig, axes = plt.subplots(len(threads), len(ops), figsize=(4.2 * len(ops), 3.4 * len(threads)), squeeze=False)
    for i, t in enumerate(threads):
        for j, op in enumerate(ops):
            ax = axes[i][j]
            cells = sorted((r for r in rows if r["op"] == op and r["threads"] == t), key=lambda r: r["d"])
            ds = [r["d"] for r in cells]
            for key, label in WAYS:
                ax.plot(ds, [r[key] / r["d"] for r in cells], marker="o", label=label)
            peer = res.get("fastest_peer", {}).get(f"{op} {t}t")
            if peer:
                ax.axhline(peer["us"], color="gray", linestyle="--", linewidth=1,
                           label=f"fastest other library ({peer['library']})")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{op}, {t} thread{'s' if t > 1 else ''}", fontsize=9)
            ax.set_xlabel("d (ciphertexts)")
            ax.grid(True, which="both", alpha=0.3)
            if j == 0:
                ax.set_ylabel("us per ciphertext")
            if i == 0 and j == len(ops) - 1:
                ax.legend(fontsize=7)
    m = res["machine"]
    fig.suptitle(f"batched evaluation, S1 (N = 8192) - {m['cpu']}, {m['date_utc']}", fontsize=9)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"plot_batch.py: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
