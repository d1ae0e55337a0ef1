"""oboro.linalg: linear algebra on encrypted data.

Plaintext matrix times encrypted vector::

    import numpy as np, oboro
    ctx = oboro.Context.from_preset("S2")
    oboro.linalg.keygen(ctx, W.shape, method="matvec")   # exactly the rotations W @ x needs
    x = ctx.encrypt(v)                                    # a 1-D vector of W.shape[1] values
    y = W @ x                                             # encrypted W @ v, one level
    W_ = oboro.linalg.PlainMatrix(ctx, W)                 # encode once for repeated products
    y = W_ @ x

``matvec`` is the diagonal method with baby-step giant-step and double hoisting (Halevi-Shoup,
Bossuat et al.): about 2 sqrt(D) rotations for D non-zero diagonals, one level. Any shape works:
x must have at least max(rows, cols) slots (encrypt(v, slots=...)), or, beyond the slots, comes
as a list of ciphertexts (pieces of ``slots`` values) and the result as a list. ``x @ W`` is
``W.T @ x``. The same on a Batch (every element). ``x.dot(v)``, ``x.mean()`` and ``x.var()``
need the keys of ``ctx.sum_rotations(slots=x.slots)``.

Encrypted matrices and their products::

    oboro.linalg.keygen(ctx, (16, 16, 16), method="3d")   # relin key + exactly the needed rotations
    eA = oboro.linalg.encrypt_matrix(ctx, A, method="3d")
    eB = oboro.linalg.encrypt_matrix(ctx, B, method="3d")
    C = ctx.decrypt(eA @ eB)                              # 2-D array of shape (A.shape[0], B.shape[1])

Methods (all three consume 3 levels):

- ``"jiang"``: Jiang, Kim, Lauter and Song (CCS 2018) on d x d matrices in d^2 slots, with
  baby-step giant-step and hoisted rotations (O(d) key switches).
- ``"3d"``: the 3-D layout of paper 003 (Mahon & Kosieradzki ported to CKKS) on d^3 slots:
  3 cMult, 1 Mult and five log d-round shift-and-add loops, each a hoisted rotate-and-sum.
- ``"block"``: matrices of any size, split into d x d blocks multiplied with one of the above
  (each input block transformed once; one relinearization per output block; threads).
- ``"auto"``: "3d" where d^3 fits the slots, else "jiang", else "block".

Matrices are zero-padded to d x d with d a power of two (the next one above the largest dimension,
or the block size for "block"); pass ``d=`` to pad two operands of different shapes alike. The
algorithms are C++ (src/oboro/algorithms/); this module only names them.
"""

from __future__ import annotations

from collections.abc import Sequence

from typing import Any

from ._core import EncryptedMatrix, PlainMatrix, encrypt_matrix, matmul, matmul_rotation_steps, matvec_rotation_steps
from ._core import matvec as _matvec

__all__ = ["EncryptedMatrix", "PlainMatrix", "encrypt_matrix", "keygen", "matmul", "matvec", "rotation_steps"]


def matvec(matrix, x) -> Any:
    """y = M x for a real matrix M (a NumPy array or a :class:`PlainMatrix`) and an encrypted
    vector x: a Ciphertext or a Batch (every element) of ``M.shape[1]`` values and at least
    ``M.shape[0]`` slots, giving one of the same kind; or a list of them, the consecutive pieces of
    a longer x (each but the last filling its slots), giving y as a list of pieces. One level; the
    Galois keys of :func:`rotation_steps` with ``method="matvec"``. Automatic mode lands on the
    standard scale of the level below."""
    return _matvec(matrix, x)


def rotation_steps(ctx, shape, method: str = "auto", d: int | None = None, slots: int | None = None) -> list[int]:
    """The rotation steps (sorted, distinct) that an operation needs, for ``ctx.keygen(rotations=...)``
    (or call :func:`keygen`).

    - ``method="matvec"``: ``M @ x`` with the matrix ``shape`` (a NumPy matrix or PlainMatrix: its
      non-zero diagonals; a banded matrix needs other steps than a dense one) or a dense matrix of
      shape ``(rows, cols)`` (planned from the shape alone: no matrix is built, so a full-slot shape
      takes a fraction of a second), on ciphertexts of ``slots`` slots (default: the next power of
      two above both dimensions). ``d`` does not apply.
    - otherwise, the product of encrypted matrices with the dimensions ``shape`` with ``method``:
      e.g. ``A.shape + B.shape`` or ``(m, k, n)``; ``d`` as in :func:`encrypt_matrix`.
    """
    if method == "matvec":
        if d is not None:
            raise ValueError("rotation_steps: d= does not apply to method='matvec' (use slots=)")
        return matvec_rotation_steps(ctx, shape, slots)
    if slots is not None:
        raise ValueError("rotation_steps: slots= applies to method='matvec' only")
    return matmul_rotation_steps(ctx, list(shape), method, d)


def keygen(ctx, shape, method: str = "auto", d: int | None = None, slots: int | None = None):
    """Adds to ``ctx`` the relinearization key and exactly the Galois keys of
    :func:`rotation_steps` (keys that exist are kept); returns ``ctx``."""
    return ctx.keygen(rotations=rotation_steps(ctx, shape, method, d, slots), relin=True)
