#!/usr/bin/env python3
"""Plots the JSON of bench_matmul: ms per d x d product against d (oboro's Jiang et al. and 3-D
method beside paper 003's SEAL figures and openfhe-numpy), and ms per block product against the
matrix size (square products, per base). Exits cleanly (status 0, a message) when matplotlib is
not installed.

usage: plot_matmul.py RESULTS.json [--out docs/benchmarks/matmul.png]
"""
import sys

from plot_util import finish, start

LABELS = {
    "jiang": "oboro Jiang et al.",
    "3d": "oboro 3-D (hoisted sums)",
    "3d-fused": "oboro 3-D (fused shifts)",
    "3d-paper": "oboro 3-D (paper form)",
}


def main():
    started = start(__doc__, "plot_matmul.py", "docs/benchmarks/matmul.png")
    if started is None:
        return 0
    res, out, plt = started
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    square = res["square"]
    for method, label in LABELS.items():
        rows = sorted((r["d"], r["ms"]) for r in square if r["method"] == method)
        left.plot([d for d, _ in rows], [ms for _, ms in rows], marker="o", label=label)
    for method, label in (("jiang", "paper 003 Jiang (SEAL, M4)"), ("3d", "paper 003 3-D (SEAL, M4)")):
        rows = sorted((r["d"], r["paper_ms"]) for r in square if r["method"] == method)
        left.plot([d for d, _ in rows], [ms for _, ms in rows], linestyle="--", marker="x", label=label)
    peer = res.get("openfhe_numpy_ms", {})
    left.plot([int(d) for d in peer], list(peer.values()), linestyle=":", marker="s", label="openfhe-numpy (PEERS.md)")
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel("d (d x d matrices)")
    left.set_ylabel(f"ms per product ({res['threads']} thread(s))")
    left.set_title("one ciphertext, S2", fontsize=9)
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=7)
    for base in ("jiang", "3d"):
        rows = sorted(
            (b["m"], b["ms"], b["d"]) for b in res["block"] if b["base"] == base and b["m"] == b["k"] == b["n"]
        )
        if rows:
            right.plot([m for m, _, _ in rows], [ms for _, ms, _ in rows], marker="o",
                       label=f"{base} blocks, d = {rows[0][2]}")
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("n (n x n times n x n)")
    right.set_ylabel("ms per product")
    right.set_title("block products, S2", fontsize=9)
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=7)
    return finish(fig, res, "encrypted matrix products", out, "plot_matmul.py")


if __name__ == "__main__":
    sys.exit(main())
