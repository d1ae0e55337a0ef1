"""oboro: CKKS homomorphic encryption (C++20 core, CPU and CUDA backends).

Quick start::

    import numpy as np, oboro
    ctx = oboro.Context.from_preset("S2")         # also S1, S3, S4, or oboro.Context(log_n=..., ...)
    ctx.keygen(rotations=[1, -1, 4])              # keys live in the context
    ct = ctx.encrypt(np.array([0.5, -1.25]))      # -> oboro.Ciphertext
    y = (ct * ct + 2.0 * ct).rotate(4)            # automatic relinearize / rescale / alignment
    x = ctx.decrypt(y)                            # -> numpy.ndarray of the original shape

Many ciphertexts at once: ``b = ctx.encrypt_batch(X)`` (one row each) -> oboro.Batch, the same
operators in one batched call per operation; ``ctx.decrypt(b)`` -> 2-D array.

Encrypted matrices: ``oboro.linalg.encrypt_matrix(ctx, A)``, ``eA @ eB``, ``ctx.decrypt(eC)``.

See help(oboro.Context) and help(oboro.Ciphertext). Errors are oboro.Error and its subclasses
(ParameterError, InvalidArgument, LevelMismatch, ScaleMismatch, ContextMismatch, MissingKey,
SerializationError, ModulusOverflow), with the messages of the C++ core. Each also derives from the
builtin it refines (ValueError, or OverflowError for ModulusOverflow); no oboro name is a builtin's.
"""

from ._core import (
    Batch,
    Ciphertext,
    Context,
    ContextMismatch,
    Error,
    InvalidArgument,
    LevelMismatch,
    MissingKey,
    ModulusOverflow,
    ParameterError,
    Plaintext,
    ScaleMismatch,
    SerializationError,
    __version__,
    build_info,
    memory_info,
    num_threads,
    preset_info,
    presets,
    release_memory,
    serialized_info,
    set_num_threads,
)
from . import functions  # noqa: E402  (oboro.functions.sigmoid, exp, log, ..., chebyshev, inverse, sqrt)
from . import linalg  # noqa: E402  (oboro.linalg.encrypt_matrix, matmul, rotation_steps, keygen)

__all__ = [
    "Batch",
    "Ciphertext",
    "Context",
    "ContextMismatch",
    "Error",
    "InvalidArgument",
    "LevelMismatch",
    "MissingKey",
    "ModulusOverflow",
    "ParameterError",
    "Plaintext",
    "ScaleMismatch",
    "SerializationError",
    "__version__",
    "functions",
    "linalg",
    "build_info",
    "memory_info",
    "num_threads",
    "preset_info",
    "presets",
    "release_memory",
    "serialized_info",
    "set_num_threads",
]
