"""What the encrypted-inference examples share: the context, the packing of samples, the timed
client and server steps, and the report (accuracy beside the plaintext model's, time per sample).

The client packs its samples into ciphertexts, slots / d samples each at a stride of d slots (d a
power of two >= the features), encrypts them as one Batch and decrypts the scores; the server
evaluates the model on the ciphertexts with only the public context (evaluation keys, no secret
key). A layer is a block-diagonal PlainMatrix (copies=slots/d: the cost of one matrix product for
all the samples of a ciphertext). Both roles run in this process here, but the server sees nothing
else: see examples/client_server for the same split across files.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field

import numpy as np

import oboro

#: N = 2^14 with 7 levels of 40 bits (128-bit security, HE standard): the deepest chain at this ring
RING = dict(log_n=14, moduli_bits=[60] + [40] * 7, special_bits=[60])


def context(rotations_of) -> tuple[oboro.Context, oboro.Context]:
    """The client's context (with the secret key) and the server's public copy, with the relinearization
    key and exactly the Galois keys rotations_of(ctx) lists."""
    client = oboro.Context(**RING)
    client.keygen(rotations=sorted(set(rotations_of(client))), relin=True)
    return client, client.public()


SLOTS = 2 ** (RING["log_n"] - 1)


def pack(X: np.ndarray, d: int) -> np.ndarray:
    """Samples (rows of X) at a stride of d slots, SLOTS / d per row of the result (zero-padded)."""
    per = SLOTS // d
    rows = -(-len(X) // per)
    out = np.zeros((rows * per, d))
    out[: len(X), : X.shape[1]] = X
    return out.reshape(rows, SLOTS)


def unpack(Y: np.ndarray, d: int, n: int, width: int) -> np.ndarray:
    """The first `width` values of each of the n samples packed by pack(..., d)."""
    return Y.reshape(-1, d)[:n, :width]


def tiled(v: np.ndarray, d: int) -> np.ndarray:
    """v at the start of every stride of d slots (a bias for every packed sample)."""
    out = np.zeros((SLOTS // d, d))
    out[:, : len(v)] = v
    return out.ravel()


def arguments(doc: str, samples: int, degree: int, argv=None) -> argparse.Namespace:
    """--samples (default: all `samples` test samples), --degree (of the activation's interpolant), --json."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=None, help=f"test samples to classify (default: all {samples})")
    p.add_argument("--degree", type=int, default=degree, help=f"degree of the activation's interpolant (default {degree})")
    p.add_argument("--json", default=None, help="write the results as JSON")
    return p.parse_args(argv)


@dataclass
class Timings:
    seconds: dict[str, float] = field(default_factory=dict)

    def run(self, step: str, f, *args):
        t = time.perf_counter()
        out = f(*args)
        self.seconds[step] = self.seconds.get(step, 0.0) + time.perf_counter() - t
        return out


def fold_interval(bound: float) -> float:
    """A round bound above `bound` (1.1x, to the next half unit): the pre-activations are divided by
    it in the layer before, so that the activation's polynomial runs on [-1, 1] and needs no level
    for the map of its interval."""
    return float(np.ceil(2.2 * bound) / 2)


def report(name: str, data: str, model: str, plain_pred: np.ndarray, enc_pred: np.ndarray, y: np.ndarray,
           score_error: float, timings: Timings, samples: int, levels: str, json_path: str | None) -> dict:
    result = {
        "example": name, "data": data, "model": model, "samples": samples,
        "accuracy_plaintext": float(np.mean(plain_pred == y)),
        "accuracy_encrypted": float(np.mean(enc_pred == y)),
        "agreement": float(np.mean(plain_pred == enc_pred)),
        "max_score_error": score_error,
        "levels": levels,
        "seconds": timings.seconds,
        "ms_per_sample": {k: 1000 * v / samples for k, v in timings.seconds.items()},
        "ring": RING, "oboro": oboro.__version__, "date": time.strftime("%Y-%m-%d"),
    }
    print(f"{name}: {data}, {model}")
    print(f"  ring N = 2^{RING['log_n']}, {len(RING['moduli_bits']) - 1} levels, 128-bit security; {levels}")
    print(f"  test samples: {samples}")
    print(f"  accuracy: plaintext {result['accuracy_plaintext']:.4f}, encrypted {result['accuracy_encrypted']:.4f}"
          f" (the same prediction for {100 * result['agreement']:.1f}% of the samples)")
    print(f"  max |encrypted - plaintext| of the scores: {score_error:.2e}")
    per = ", ".join(f"{k} {v:.2f}" for k, v in result["ms_per_sample"].items())
    print(f"  time per sample (ms, batched): {per}")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(result, f, indent=2)
    return result
