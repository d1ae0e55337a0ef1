"""Encrypted logistic-regression inference on the Wisconsin breast-cancer data set (569 samples,
30 features; it ships inside scikit-learn, no download).

    python examples/ml/logistic_regression.py [--samples N] [--degree 63] [--json PATH]

The model is trained in the clear (scikit-learn). A client encrypts its standardized test samples;
the server computes sigmoid(w . x + b) for every sample with only the public context:
    w . x / B + b / B        one level: the score divided by a bound B of the training scores (a
                             block-diagonal PlainMatrix: 256 samples per ciphertext)
    sigmoid(B u) on [-1, 1]   Chebyshev interpolant of degree 63: 6 levels (no level for a map)
and the client decrypts the probabilities. The report gives both accuracies, how often the
predictions agree, the largest probability error and the time per sample. Exit status 1 when the
encrypted predictions disagree with the plaintext model on more than 1% of the samples.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import oboro  # noqa: E402
import oboro.functions as F  # noqa: E402
import oboro.linalg as la  # noqa: E402
from inference import SLOTS, Timings, arguments, context, fold_interval, pack, report, tiled, unpack  # noqa: E402


def main(argv=None) -> int:
    a = arguments(__doc__, 114, 63, argv)

    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    model = LogisticRegression(max_iter=5000).fit(X_train, y_train)
    if a.samples:
        X_test, y_test = X_test[: a.samples], y_test[: a.samples]
    w, b = model.coef_[0], float(model.intercept_[0])
    # the bound of the scores: the training scores' (test scores beyond it would leave the interval)
    bound = fold_interval(np.max(np.abs(np.concatenate([X_train, X_test]) @ w + b)))

    d = 32  # 30 features: 256 samples per ciphertext
    client, server = context(
        lambda ctx: la.rotation_steps(ctx, la.PlainMatrix(ctx, w[None, :], copies=SLOTS // d), method="matvec"))
    t = Timings()
    # client: encrypt the packed samples (one Batch) and send the bytes
    sent = t.run("encrypt", lambda: client.encrypt_batch(pack(X_test, d)).serialize())
    # server: the model on ciphertexts, with the public context only
    batch = oboro.Batch.deserialize(server, sent)
    weights = la.PlainMatrix(server, w[None, :] / bound, copies=SLOTS // d)  # w . x / B at slot t*d
    score = t.run("evaluate", lambda: F.chebyshev(weights @ batch + tiled(np.array([b / bound]), d),
                                                   lambda u: 1 / (1 + np.exp(-bound * u)), (-1, 1), a.degree))
    # client: decrypt the probabilities (slot t*d of each ciphertext)
    probs = unpack(t.run("decrypt", client.decrypt, score), d, len(X_test), 1)[:, 0]
    plain = model.predict_proba(X_test)[:, 1]
    levels = f"{batch.level - score.level} levels (w . x 1, sigmoid {batch.level - score.level - 1}), bound B = {bound:g}"
    r = report("logistic regression", "breast cancer (sklearn)", f"30 features, sigmoid degree {a.degree}",
               (plain > 0.5).astype(int), (probs > 0.5).astype(int), y_test, float(np.max(np.abs(probs - plain))),
               t, len(y_test), levels, a.json)
    return 0 if r["agreement"] >= 0.99 else 1


if __name__ == "__main__":
    sys.exit(main())
