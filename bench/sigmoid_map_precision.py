#!/usr/bin/env python3
"""What the map of the interval onto [-1, 1] costs the precision of a Chebyshev function.

usage: sigmoid_map_precision.py [--encryptions K] [--json OUT.json]

On the chain of `oboro compare --circuits --circuits-log-n 15` (N = 2^15, Q = [60] + 11 x [40] bits,
P = 4 x 60 bits, dnum 3, public-key inputs), oboro's sigmoid of degree 63 on [-8, 8] two ways:
oboro.functions.sigmoid at its defaults (u = x / 8 by a product with a constant and its rescale,
then the series: 7 levels) and the same series of sigmoid(8 u) on u = x / 8 encrypted as it is (no
map, 6 levels). Each on K fresh encryptions of the same inputs: the median over the encryptions of the worst slot's bits and of
the mean bits over the slots (precision.error_bits, the metric of `oboro compare`). Equal figures
say that the map's rounding is not what sets the precision; the evaluation's roundings are.
"""
import argparse
import datetime
import json
import math
import pathlib
import platform

import numpy as np

import oboro
from oboro.compare.precision import error_bits  # oboro compare's one metric


def _sigmoid(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encryptions", type=int, default=10)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    ctx = oboro.Context(log_n=15, moduli_bits=[60] + [40] * 11, special_bits=[60] * 4, scale_bits=40, dnum=3)
    ctx.keygen(rotations=[], relin=True)
    pub = ctx.public()
    x = np.random.default_rng(10).uniform(-8.0, 8.0, ctx.slots)  # benchmark inputs, not key material
    want = 1.0 / (1.0 + np.exp(-x))
    direct = oboro.functions.coefficients(lambda u: _sigmoid(8.0 * u), (-1.0, 1.0), 63)
    ways = {  # (input, its evaluation)
        "map by one level": (x, oboro.functions.sigmoid),
        "no map (u = x / 8 encrypted)": (x / 8.0, lambda ct: ct.polyval(direct, basis="chebyshev")),
    }
    rows = []
    for name, (values, evaluate) in ways.items():
        worst, mean, levels = [], [], 0
        for _ in range(args.encryptions):
            ct = pub.encrypt(values)
            out = evaluate(ct)
            w, m = error_bits(ctx.decrypt(out).real, want)
            worst.append(w)
            mean.append(m)
            levels = ct.level - out.level
        rows.append({"way": name, "levels": levels, "worst_bits": float(np.median(worst)),
                     "mean_bits": float(np.median(mean))})
        print(f"{name:30s} {levels} levels: worst slot {rows[-1]['worst_bits']:.2f} bits, mean "
              f"{rows[-1]['mean_bits']:.2f} bits (medians of {args.encryptions} encryptions)")
    if args.json:
        record = {"benchmark": "sigmoid_map_precision", "encryptions": args.encryptions,
                  "machine": {"platform": platform.platform(), "processor": platform.processor(),
                              "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
                  "rows": rows}
        pathlib.Path(args.json).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
