"""Encrypted logistic-regression TRAINING with bootstrapping, on the Wisconsin breast-cancer data set
(569 samples, 30 features; it ships inside scikit-learn, no download).

    python examples/ml/logistic_training.py [--ring B1|test] [--iterations 8] [--samples N]
                                            [--degree 15] [--json PATH]

The data owner encrypts the standardized training samples X (one row of 32 slots per sample: 30
features, a constant 1 for the bias, a zero), their labels y and a zero model w. The server runs
full-batch gradient descent on the ciphertexts with only the public context:
    u_i = w . x_i / B      X * w, then the sum of each row: its first slot, masked by 1/B and
                           copied back over the row (a rotation and the same sum)
    s_i = sigmoid(B u_i)   the Chebyshev interpolant of the given degree on [-1, 1] (the interval
                           [-B, B] folded into the mask: no level for its map)
    g   = sum_i (s_i - y_i) x_i   (s - y) * X, then the sum over the rows (a stride of 32)
    w  <- w - (rate / n) g
one iteration takes 4 levels plus the sigmoid's, so w is bootstrapped at the start of every
iteration after the first. The data owner checks first, in plaintext on its own data, that the
scores stay inside [-B, B] over the iterations (the interpolant is only valid there). The owner decrypts w at the end. The report gives the test accuracy
of the encrypted model beside the same gradient descent in plaintext (with the exact sigmoid), the
largest difference of the weights (also against plaintext training with the same polynomial, which
leaves the encryption's error alone), and the time per iteration with its bootstrap's share. Exit
status 1 when the encrypted model's accuracy is more than 2 points below the plaintext one's.

--ring B1 is the bootstrappable preset (N = 2^16, 128-bit: about 20 GiB of memory with the rotation
keys); --ring test is the same chain at N = 2^12 (INSECURE, for tests: 64 samples fit).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oboro  # noqa: E402
import oboro.bench  # noqa: E402
import oboro.functions as F  # noqa: E402
from inference import Timings  # noqa: E402

ROW = 32  # slots per sample: 30 features, the bias's constant 1, a zero


def test_ring() -> oboro.Context:
    """B1's chain (10 levels left after a bootstrap) at N = 2^12: INSECURE, for tests."""
    moduli = [60] + [40] * 10 + [45] * 3 + [60] * 9 + [58] * 3
    return oboro.Context(log_n=12, moduli_bits=moduli, special_bits=[61] * 4, dnum=7, security=None,
                         hamming_weight=192)


def rows(X: np.ndarray, slots: int) -> np.ndarray:
    """The samples with their bias column, one row of ROW slots each, zero-padded to `slots`."""
    out = np.zeros((slots // ROW, ROW))
    out[: len(X), : X.shape[1]] = X
    out[: len(X), X.shape[1]] = 1.0
    return out.ravel()


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def train_plain(X: np.ndarray, y: np.ndarray, iterations: int, rate: float, activation=sigmoid, track=False):
    """The same full-batch gradient descent in the clear (with the exact sigmoid, or `activation`);
    with track=True also the largest |score| it meets."""
    A = np.hstack([X, np.ones((len(X), 1))])
    w = np.zeros(A.shape[1])
    widest = 0.0
    for _ in range(iterations):
        z = A @ w
        widest = max(widest, float(np.max(np.abs(z))))
        w -= rate / len(A) * A.T @ (activation(z) - y)
    return (w, widest) if track else w


def accuracy(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(((np.hstack([X, np.ones((len(X), 1))]) @ w) > 0) == y))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ring", choices=["B1", "test"], default="B1")
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--samples", type=int, default=None, help="training samples (default: all that fit, up to 455)")
    p.add_argument("--degree", type=int, default=31, help="degree of the sigmoid's interpolant (default 31)")
    p.add_argument("--rate", type=float, default=0.5, help="learning rate (default 0.5)")
    p.add_argument("--bound", type=float, default=24.0, help="the sigmoid's interval [-B, B] (default 24)")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)

    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

    t = Timings()
    owner = t.run("context and keys", lambda: oboro.Context.from_preset("B1") if a.ring == "B1" else test_ring())
    slots = owner.slots
    n = min(len(X_train), slots // ROW, a.samples or len(X_train))
    X_train, y_train = X_train[:n], y_train[:n]
    # the data owner's check: the plaintext training's scores stay in the sigmoid's interval
    _, widest = train_plain(X_train, y_train, a.iterations, a.rate, track=True)
    if widest > a.bound:
        print(f"the scores reach {widest:.1f} in plaintext training, outside the sigmoid's interval "
              f"[-{a.bound:g}, {a.bound:g}]: raise --bound or lower --rate", file=sys.stderr)
        return 2
    steps = sorted(set(owner.sum_rotations(stride=1, count=ROW, strategy="doubling")) | {1 - ROW}
                   | set(owner.sum_rotations(stride=ROW, strategy="doubling")))
    t.run("context and keys", owner.keygen, steps, False, True, True)
    server = owner.public()

    # the data owner: samples, labels (copied over each row) and a zero model, encrypted
    enc_X = owner.encrypt(rows(X_train, slots))
    enc_y = owner.encrypt(np.repeat(np.pad(y_train.astype(float), (0, slots // ROW - n)), ROW))
    enc_w = owner.encrypt(np.zeros(slots))
    first = np.zeros(slots)
    first[::ROW] = 1.0 / a.bound  # the first slot of each row, where the row's sum is

    # the server: gradient descent on ciphertexts
    X_s = oboro.Ciphertext.deserialize(server, enc_X.serialize())
    y_s = oboro.Ciphertext.deserialize(server, enc_y.serialize())
    w = oboro.Ciphertext.deserialize(server, enc_w.serialize())
    boot_info = server.bootstrap_info()
    for i in range(a.iterations):
        if i > 0:
            w = t.run("bootstrap", w.bootstrap)
        start = time.perf_counter()
        row_sums = (X_s * w).sum(stride=1, count=ROW, strategy="doubling")
        u = (row_sums * first).rotate(1 - ROW).sum(stride=1, count=ROW, strategy="doubling")
        s = F.chebyshev(u, lambda v: sigmoid(a.bound * v), (-1, 1), a.degree)
        g = ((s - y_s) * X_s).sum(stride=ROW, strategy="doubling")
        w = w - g * (a.rate / n)
        t.seconds["gradient step"] = t.seconds.get("gradient step", 0.0) + time.perf_counter() - start
        print(f"  iteration {i + 1}/{a.iterations}: w at level {w.level}", flush=True)

    # the data owner decrypts the model
    w_enc = owner.decrypt(oboro.Ciphertext.deserialize(owner, w.serialize()))[: X_train.shape[1] + 1]
    w_plain = train_plain(X_train, y_train, a.iterations, a.rate)
    # and with the encrypted run's own polynomial: the difference is then the encryption's alone
    poly = np.polynomial.chebyshev.Chebyshev(
        oboro.functions.coefficients(lambda v: sigmoid(a.bound * v), (-1, 1), a.degree), domain=[-a.bound, a.bound])
    w_poly = train_plain(X_train, y_train, a.iterations, a.rate, poly)
    per_iteration = (t.seconds.get("bootstrap", 0.0) + t.seconds["gradient step"]) / a.iterations
    result = {
        "example": "logistic regression training", "data": "breast cancer (sklearn)", "ring": a.ring,
        "training_samples": n, "test_samples": len(X_test), "iterations": a.iterations, "rate": a.rate,
        "sigmoid": {"interval": [-a.bound, a.bound], "degree": a.degree},
        "accuracy_plaintext": accuracy(w_plain, X_test, y_test),
        "accuracy_encrypted": accuracy(w_enc, X_test, y_test),
        "max_weight_difference": float(np.max(np.abs(w_enc - w_plain))),
        "max_weight_difference_same_polynomial": float(np.max(np.abs(w_enc - w_poly))),
        "bootstrap_output_level": boot_info["output_level"],
        "seconds": t.seconds, "seconds_per_iteration": per_iteration,
        "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,  # Linux: KiB
        "machine": oboro.bench.machine_info(oboro.num_threads()),
    }
    ring = "B1 (N = 2^16, 128-bit)" if a.ring == "B1" else "test ring (N = 2^12, INSECURE)"
    print(f"logistic regression training: breast cancer (sklearn), {n} training samples, {a.iterations} iterations, "
          f"sigmoid of degree {a.degree} on [-{a.bound:g}, {a.bound:g}], {ring}")
    print(f"  accuracy on {len(X_test)} test samples: plaintext training {result['accuracy_plaintext']:.4f}, "
          f"encrypted training {result['accuracy_encrypted']:.4f}")
    print(f"  max |encrypted - plaintext| of the weights: {result['max_weight_difference']:.2e} (the sigmoid's "
          f"polynomial and the encryption); against plaintext training with the same polynomial: "
          f"{result['max_weight_difference_same_polynomial']:.2e} (the encryption alone)")
    boot = t.seconds.get("bootstrap", 0.0)
    print(f"  time per iteration: {per_iteration:.2f} s ({boot / max(1, a.iterations - 1):.2f} s bootstrap, "
          f"{100 * boot / (per_iteration * a.iterations):.0f}% of the training); keys and set-up "
          f"{t.seconds['context and keys']:.1f} s; peak memory {result['peak_gib']:.1f} GiB")
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=2))
    return 0 if result["accuracy_encrypted"] >= result["accuracy_plaintext"] - 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
