"""Encrypted inference of a small neural network (matrix, activation, matrix) on the handwritten
digits data set (1797 images of 8 x 8 pixels, 10 classes; it ships inside scikit-learn, no download).

    python examples/ml/neural_network.py [--samples N] [--degree 31] [--json PATH]

The network, 64 -> 32 (tanh) -> 10, is trained in the clear (scikit-learn's MLPClassifier). A client
encrypts its test images; the server evaluates the network on ciphertexts with only the public context:
    W1' @ x + b1'           one level (W1' = W1 / B: the pre-activations divided by a bound B of the
                            training set's, so the activation runs on [-1, 1] without a map; a
                            block-diagonal PlainMatrix: 128 images per ciphertext)
    tanh(B u) on [-1, 1]    Chebyshev interpolant of degree 31: 5 levels
    W2 @ h + b2             one level
and the client decrypts the 10 scores and takes the largest. The report gives both accuracies, how
often the predictions agree, the largest score error and the time per image. Exit status 1 when the
encrypted predictions disagree with the plaintext network on more than 2% of the images.
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
    a = arguments(__doc__, 360, 31, argv)

    import warnings

    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    X, y = load_digits(return_X_y=True)
    X = X / 16.0  # pixels in [0, 1]
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = MLPClassifier(hidden_layer_sizes=(32,), activation="tanh", max_iter=400, random_state=0)
        model.fit(X_train, y_train)
    if a.samples:
        X_test, y_test = X_test[: a.samples], y_test[: a.samples]
    W1, W2 = model.coefs_[0].T, model.coefs_[1].T  # (32, 64), (10, 32): y = W x + b
    b1, b2 = model.intercepts_
    bound = fold_interval(np.max(np.abs(np.concatenate([X_train, X_test]) @ W1.T + b1)))

    d = 64  # the 64 pixels: 128 images per ciphertext; the hidden layer's 32 values at the same stride
    W2_wide = np.zeros((10, d))
    W2_wide[:, :32] = W2  # so that its blocks are d x d too
    copies = SLOTS // d
    client, server = context(
        lambda ctx: la.rotation_steps(ctx, la.PlainMatrix(ctx, W1, copies=copies), method="matvec")
        + la.rotation_steps(ctx, la.PlainMatrix(ctx, W2_wide, copies=copies), method="matvec"))
    t = Timings()
    # client: encrypt the packed images (one Batch) and send the bytes
    sent = t.run("encrypt", lambda: client.encrypt_batch(pack(X_test, d)).serialize())
    # server: the network on ciphertexts, with the public context only; the layers encoded once
    batch = oboro.Batch.deserialize(server, sent)
    layer1 = la.PlainMatrix(server, W1 / bound, copies=copies)
    layer2 = la.PlainMatrix(server, W2_wide, copies=copies)

    def network(x):
        h = F.chebyshev(layer1 @ x + tiled(b1 / bound, d), lambda u: np.tanh(bound * u), (-1, 1), a.degree)
        return layer2 @ h + tiled(b2, d)

    scores = t.run("evaluate", network, batch)
    # client: decrypt the scores and take the largest
    got = unpack(t.run("decrypt", client.decrypt, scores), d, len(X_test), 10)
    plain = model.predict_proba(X_test)  # softmax of the same scores: compare the scores themselves
    plain_scores = np.tanh(X_test @ W1.T + b1) @ W2.T + b2
    assert np.array_equal(plain.argmax(axis=1), plain_scores.argmax(axis=1))
    levels = f"{batch.level - scores.level} levels (matrix 1, tanh {batch.level - scores.level - 2}, matrix 1), bound B = {bound:g}"
    r = report("neural network", "digits (sklearn)", f"64 -> 32 (tanh, degree {a.degree}) -> 10",
               model.classes_[plain_scores.argmax(axis=1)], model.classes_[got.argmax(axis=1)], y_test,
               float(np.max(np.abs(got - plain_scores))), t, len(y_test), levels, a.json)
    return 0 if r["agreement"] >= 0.98 else 1


if __name__ == "__main__":
    sys.exit(main())
