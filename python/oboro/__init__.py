"""oboro: CKKS homomorphic encryption (C++20 core, CPU and CUDA backends)."""

from ._core import __version__, build_info

__all__ = ["__version__", "build_info"]
