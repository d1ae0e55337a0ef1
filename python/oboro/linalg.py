"""oboro.linalg: encrypted real matrices and their products.

Quick start::

    import numpy as np, oboro
    ctx = oboro.Context.from_preset("S2")
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

from ._core import EncryptedMatrix, encrypt_matrix, matmul, matmul_rotation_steps

__all__ = ["EncryptedMatrix", "encrypt_matrix", "keygen", "matmul", "rotation_steps"]


def rotation_steps(ctx, shape: Sequence[int], method: str = "auto", d: int | None = None) -> list[int]:
    """The rotation steps (sorted, distinct) that the product of matrices with the dimensions
    ``shape`` needs with ``method``: e.g. ``A.shape + B.shape`` or ``(m, k, n)``. Pass them to
    ``ctx.keygen(rotations=...)``, or call :func:`keygen`. ``d`` as in :func:`encrypt_matrix`."""
    return matmul_rotation_steps(ctx, list(shape), method, d)


def keygen(ctx, shape: Sequence[int], method: str = "auto", d: int | None = None):
    """Adds to ``ctx`` the relinearization key and exactly the Galois keys of
    :func:`rotation_steps` (keys that exist are kept); returns ``ctx``."""
    return ctx.keygen(rotations=rotation_steps(ctx, shape, method, d), relin=True)
