#!/usr/bin/env python3
"""Serialized sizes and (de)serialization times of oboro's objects, per preset.

usage: bench_serialization.py [--presets S1,S2] [--repeat 5] [--min-seconds 0.3]
                              [--json docs/benchmarks/serialization.json]
                              [--markdown docs/benchmarks/serialization.md]

For each preset: a fresh secret-key ciphertext at the top level, a ciphertext after one
multiplication (no seed left), a fresh Batch of 16 ciphertexts, a fresh 3-D EncryptedMatrix
(16 x 16, one ciphertext), the public key, the relinearization key and one Galois key: their
size in memory (64-bit words), serialized without compression (residues bit-packed to their
prime's size) and with seeded compression (the uniform half as a 32-byte seed), and the median
times of serialize and deserialize (deserialize of a context includes re-creating it). Other
libraries' serialized ciphertext sizes come from bench/peers.json (shared/PEERS.md).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

import oboro
from oboro.bench import machine_info, measure

ROOT = pathlib.Path(__file__).resolve().parents[1]
BATCH = 16  # ciphertexts in the serialized Batch


def part_sizes(bundle: bytes) -> dict[str, int]:
    return {p["type"]: p["size"] for p in oboro.serialized_info(bundle)["parts"]}


def run_preset(name: str, repeat: int, min_seconds: float) -> dict:
    ctx = oboro.Context.from_preset(name).keygen(rotations=[1])
    n, levels = 2 * ctx.slots, ctx.max_level + 1
    info = oboro.preset_info(name)
    q_count, p_count, dnum = levels, len(info["special_bits"]), info["dnum"]
    word = 8
    x = np.random.default_rng(1).uniform(-1, 1, ctx.slots)
    fresh = ctx.encrypt(x)
    product = fresh * fresh
    batch = ctx.encrypt_batch(np.random.default_rng(2).uniform(-1, 1, (BATCH, ctx.slots)))
    matrix = oboro.linalg.encrypt_matrix(ctx, np.random.default_rng(3).uniform(-1, 1, (16, 16)), method="3d")
    plain, seeded = part_sizes(ctx.serialize(compress=False)), part_sizes(ctx.serialize())
    key_poly = (q_count + p_count) * n * word
    rows = [
        {"object": "ciphertext, fresh (secret key), top level", "memory": 2 * levels * n * word,
         "plain": len(fresh.serialize(compress=False)), "seeded": len(fresh.serialize()),
         "serialize_us": measure(lambda: fresh.serialize(), repeat, min_seconds).median_us,
         "deserialize_us": measure(lambda b=fresh.serialize(): oboro.Ciphertext.deserialize(ctx, b), repeat,
                                   min_seconds).median_us},
        {"object": f"ciphertext after ct*ct (level {product.level})", "memory": 2 * (product.level + 1) * n * word,
         "plain": len(product.serialize(compress=False)), "seeded": len(product.serialize()),
         "serialize_us": measure(lambda: product.serialize(), repeat, min_seconds).median_us,
         "deserialize_us": measure(lambda b=product.serialize(): oboro.Ciphertext.deserialize(ctx, b), repeat,
                                   min_seconds).median_us},
        {"object": f"Batch of {BATCH} fresh ciphertexts, top level", "memory": BATCH * 2 * levels * n * word,
         "plain": len(batch.serialize(compress=False)), "seeded": len(batch.serialize()),
         "serialize_us": measure(lambda: batch.serialize(), repeat, min_seconds).median_us,
         "deserialize_us": measure(lambda b=batch.serialize(): oboro.Batch.deserialize(ctx, b), repeat,
                                   min_seconds).median_us},
        {"object": "EncryptedMatrix 16 x 16, 3-D layout, fresh", "memory": 2 * levels * n * word,
         "plain": len(matrix.serialize(compress=False)), "seeded": len(matrix.serialize()),
         "serialize_us": measure(lambda: matrix.serialize(), repeat, min_seconds).median_us,
         "deserialize_us": measure(lambda b=matrix.serialize(): oboro.linalg.EncryptedMatrix.deserialize(ctx, b),
                                   repeat, min_seconds).median_us},
        {"object": "public key", "memory": 2 * key_poly, "plain": plain["public key"], "seeded": seeded["public key"]},
        {"object": "relinearization key", "memory": 2 * dnum * key_poly, "plain": plain["relinearization key"],
         "seeded": seeded["relinearization key"]},
        {"object": "Galois key (one rotation)", "memory": 2 * dnum * key_poly, "plain": plain["Galois keys"],
         "seeded": seeded["Galois keys"]},
        {"object": "context with public, relin and 1 Galois key", "memory": None,
         "plain": len(ctx.serialize(compress=False)), "seeded": len(ctx.serialize()),
         "serialize_us": measure(lambda: ctx.serialize(), repeat, min_seconds).median_us,
         "deserialize_us": measure(lambda b=ctx.serialize(): oboro.Context.deserialize(b), repeat,
                                   min_seconds).median_us},
    ]
    return {"preset": name, "n": n, "levels": levels, "dnum": dnum, "rows": rows}


def fmt_bytes(b: int | None) -> str:
    if b is None:
        return "-"
    return f"{b / 2**20:,.2f} MiB" if b >= 2**20 else f"{b / 2**10:,.1f} KiB"


def fmt_us(us: float | None) -> str:
    if us is None:
        return "-"
    return f"{us / 1000:,.2f} ms" if us >= 1000 else f"{us:,.0f} us"


def markdown(results: list[dict], machine: dict, peers: dict) -> str:
    lines = [
        "# Serialized sizes and times",
        "",
        f"Generated by `bench/bench_serialization.py` on {machine['date_utc']}: {machine['cpu']}, "
        f"{machine['threads']} thread(s), medians. \"plain\": residues bit-packed to their prime's size; "
        "\"seeded\": plus the uniform half stored as a 32-byte seed (the default, `compress=True`); "
        "only keys and fresh secret-key encryptions (ciphertexts, batch elements, matrix blocks) have one.",
        "",
    ]
    for r in results:
        lines += [f"## {r['preset']} (N = {r['n']}, {r['levels']} primes, dnum {r['dnum']})", "",
                  "| object | in memory | plain | seeded | saving vs memory | serialize | deserialize |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for row in r["rows"]:
            saving = f"{100 * (1 - row['seeded'] / row['memory']):.0f}%" if row["memory"] else "-"
            lines.append(f"| {row['object']} | {fmt_bytes(row['memory'])} | {fmt_bytes(row['plain'])} | "
                         f"{fmt_bytes(row['seeded'])} | {saving} | {fmt_us(row.get('serialize_us'))} | "
                         f"{fmt_us(row.get('deserialize_us'))} |")
        sizes = peers.get(r["preset"], {}).get("serialized ciphertext, top level (KiB)")
        if sizes:
            others = ", ".join(f"{lib} {kib:,} KiB" for lib, kib in sizes.items())
            lines += ["", f"Other libraries' serialized top-level ciphertext ({peers['source'].split(':')[0]}): "
                      f"{others}; oboro: {fmt_bytes(r['rows'][0]['seeded'])} fresh, "
                      f"{fmt_bytes(r['rows'][0]['plain'])} after any operation."]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default="S1,S2")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--min-seconds", type=float, default=0.3)
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--markdown", type=pathlib.Path)
    args = ap.parse_args()
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    unknown = [p for p in presets if p not in oboro.presets()]
    if unknown:
        print(f"bench_serialization: unknown preset(s) {unknown}; known: {oboro.presets()}", file=sys.stderr)
        return 2
    results = []
    for p in presets:
        print(f"{p} ...", file=sys.stderr, flush=True)
        results.append(run_preset(p, args.repeat, args.min_seconds))
    machine = machine_info(oboro.num_threads())
    peers = json.loads((ROOT / "bench" / "peers.json").read_text())
    text = markdown(results, machine, peers)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "results": results}, indent=2) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    if args.markdown:
        args.markdown.write_text(text)
        print(f"wrote {args.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
