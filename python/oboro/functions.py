"""oboro.functions: non-linear functions of encrypted values.

Quick start::

    import numpy as np, oboro
    ctx = oboro.Context.from_preset("S3")          # 9 levels
    ctx.keygen()                                   # the relinearization key is all they need
    ct = ctx.encrypt(np.linspace(-6, 6, 256))
    y = oboro.functions.sigmoid(ct)                # interval (-8, 8), degree 63: 7 levels
    print(np.max(np.abs(ctx.decrypt(y) - 1 / (1 + np.exp(-np.linspace(-6, 6, 256))))))

Each function is a Chebyshev interpolant of degree ``degree`` on ``interval`` evaluated with
``Ciphertext.polyval`` (baby-step giant-step, level-optimal): it consumes ceil(log2(degree + 1))
levels plus one for the map of the interval onto [-1, 1] (none when the interval has width 2).
``oboro functions`` prints the table of the defaults with their depth and their error
in double precision (the encryption noise adds to it; see docs/guide.md).

Every slot must lie in the interval, unused slots included (a vector of k values fills the next
power of two of slots; the rest are 0, so 0 must be in the interval or the vector must fill
them). Outside the interval the polynomial is not the function: it grows like T_degree, which
at 1.5 times the half-width is already about 10^(degree/4). Nothing checks the encrypted values
(nothing can); choose the interval from what is known of the data.

``inverse``, ``sqrt`` and ``inverse_sqrt`` refine a Chebyshev start with Newton's iterations
(``plan_inverse`` shows the degree, the iterations and the depth). ``x ** k`` is a level-optimal
integer power.

``sign``, ``absolute``, ``maximum``, ``minimum`` and ``greater`` compose minimax polynomials (Lee,
Lee, Kim and No 2021): exact to ``2^-bits`` for ``gap <= |x| <= bound`` (for the comparisons, x is
a - b), between 0 and the answer in the gap, and wrong beyond ``bound`` (every slot must lie in
[-bound, bound]). ``plan_sign`` shows the degrees, the depth and the error: about 12 levels for
``gap = bound / 256`` at 10 bits, 17 for ``bound / 4096`` at 16 bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from . import _core

__all__ = [
    "absolute", "chebyshev", "coefficients", "cos", "exp", "gelu", "greater", "inverse", "inverse_sqrt", "log", "maximum",
    "minimum", "plan", "plan_inverse", "plan_sign", "print_table", "sigmoid", "sign", "sin", "softplus", "sqrt", "table",
    "tanh",
]


def _gelu(t: float) -> float:
    return 0.5 * t * (1.0 + math.erf(t / math.sqrt(2.0)))


def _softplus(t: float) -> float:
    return max(t, 0.0) + math.log1p(math.exp(-abs(t)))


def _sigmoid(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


# name: (function, default interval, default degree)
_FUNCTIONS: dict[str, tuple[Callable[[float], float], tuple[float, float], int]] = {
    "sigmoid": (_sigmoid, (-8.0, 8.0), 63),
    "exp": (math.exp, (-4.0, 4.0), 15),
    "log": (math.log, (0.25, 8.0), 63),
    "tanh": (math.tanh, (-4.0, 4.0), 63),
    "gelu": (_gelu, (-8.0, 8.0), 63),
    "softplus": (_softplus, (-8.0, 8.0), 63),
    "sin": (math.sin, (-math.pi, math.pi), 15),
    "cos": (math.cos, (-math.pi, math.pi), 15),
}


def coefficients(f: Callable[[float], float], interval: tuple[float, float], degree: int) -> list[float]:
    """The Chebyshev coefficients (lowest first) of the interpolant of ``f`` at the ``degree + 1``
    Chebyshev nodes of ``interval``: near-minimax for smooth ``f``. ``f`` is called once per node."""
    return _core.chebyshev_interpolant(f, tuple(interval), degree)


def chebyshev(x, f: Callable[[float], float], interval: tuple[float, float], degree: int):
    """``f(x)`` slot by slot by the Chebyshev interpolant of ``f`` of degree ``degree`` on
    ``interval`` (a Ciphertext or a Batch). Every slot must lie in the interval."""
    return x.polyval(coefficients(f, interval, degree), basis="chebyshev", interval=tuple(interval))


def plan(x_level: int, interval: tuple[float, float], degree: int, f: Callable[[float], float] | None = None) -> dict:
    """What ``chebyshev(x, f, interval, degree)`` does from level ``x_level`` (no work): depth,
    ciphertext products and their relinearizations (products summed before one rescale share one),
    scalar products, baby steps. ``f`` (default: a series with every coefficient)
    matters only through its zero coefficients (odd and even functions cost less)."""
    # distinct coefficients: no term of the giant-step divisions cancels
    coeffs = coefficients(f, interval, degree) if f is not None else [1.0 / (i + 1) for i in range(degree + 1)]
    return _core.polynomial_plan(coeffs, "chebyshev", tuple(interval), x_level)


def _named(name: str):
    f, default_interval, default_degree = _FUNCTIONS[name]

    def apply(x, interval: tuple[float, float] = default_interval, degree: int = default_degree):
        return chebyshev(x, f, interval, degree)

    apply.__name__ = name
    apply.__qualname__ = name
    apply.__doc__ = (
        f"{name}(x) slot by slot: the Chebyshev interpolant of degree ``degree`` (default {default_degree}) "
        f"on ``interval`` (default {default_interval}); every slot must lie in the interval. "
        "``oboro functions`` prints its depth and error."
    )
    return apply


sigmoid = _named("sigmoid")
exp = _named("exp")
log = _named("log")
tanh = _named("tanh")
gelu = _named("gelu")
softplus = _named("softplus")  # log(1 + e^x): the smooth ReLU
sin = _named("sin")
cos = _named("cos")


def inverse(x, interval: tuple[float, float], bits: float = 24.0):
    """1/x on ``interval`` = (lo, hi), 0 < lo < hi (Ciphertext.inverse)."""
    return x.inverse(tuple(interval), bits)


def sqrt(x, interval: tuple[float, float], bits: float = 24.0):
    """sqrt(x) on ``interval`` = (lo, hi), 0 < lo < hi (Ciphertext.sqrt)."""
    return x.sqrt(tuple(interval), bits)


def inverse_sqrt(x, interval: tuple[float, float], bits: float = 24.0):
    """1/sqrt(x) on ``interval`` = (lo, hi), 0 < lo < hi (Ciphertext.inverse_sqrt)."""
    return x.inverse_sqrt(tuple(interval), bits)


def sign(x, bound: float = 1.0, gap: float = 2.0**-8, bits: float = 10.0):
    """sign(x) slot by slot (a Ciphertext or a Batch): +-1 within 2^-bits for gap <= |x| <= bound,
    between 0 and sign(x) for |x| < gap; every slot must lie in [-bound, bound]. The levels:
    ``plan_sign(bound, gap, bits)["depth"]``."""
    return _core.sign(x, bound, gap, bits)


def absolute(x, bound: float = 1.0, gap: float = 2.0**-8, bits: float = 10.0):
    """|x| = x sign(x): error bound 2^-bits for |x| >= gap, at most |x| below; one level more than sign."""
    return _core.absolute(x, bound, gap, bits)


def maximum(a, b, bound: float = 1.0, gap: float = 2.0**-8, bits: float = 10.0):
    """max(a, b) = ((a + b) + |a - b|) / 2, slot by slot, with ``bound`` and ``gap`` for a - b:
    error bound 2^-bits / 2 where |a - b| >= gap, at most |a - b| / 2 below; one level more than sign."""
    return _core.maximum(a, b, bound, gap, bits)


def minimum(a, b, bound: float = 1.0, gap: float = 2.0**-8, bits: float = 10.0):
    """min(a, b) = ((a + b) - |a - b|) / 2, as :func:`maximum`."""
    return _core.minimum(a, b, bound, gap, bits)


def greater(a, b, bound: float = 1.0, gap: float = 2.0**-8, bits: float = 10.0):
    """a > b as (sign(a - b) + 1) / 2: 1 where a - b >= gap, 0 where a - b <= -gap (within
    2^-bits / 2), between 0 and 1 in the gap; the levels of sign."""
    return _core.greater(a, b, bound, gap, bits)


def plan_sign(bound: float = 1.0, gap: float = 2.0**-8, bits: float = 10.0) -> dict:
    """The plan of :func:`sign` and the comparisons (no encrypted work): the composite's degrees,
    depth, ciphertext products and error in double precision. Made once per arguments and kept."""
    return _core.sign_plan(bound, gap, bits)


def plan_inverse(interval: tuple[float, float], bits: float = 24.0, which: str = "inverse") -> dict:
    """The plan of ``inverse`` (``which="inverse_sqrt"`` or ``"sqrt"``: of those): initial degree, Newton
    iterations, depth, relative error before and after them, and for sqrt ``times_x`` (computed as
    x / sqrt(x), else by the interpolant of sqrt itself, where that is no deeper)."""
    return _core.newton_plan(which, tuple(interval), bits)


def table() -> list[dict]:
    """The named functions at their defaults: interval, degree, depth and the interpolant's
    maximum error in double precision on 4097 points of the interval (ends included)."""
    rows = []
    for name, (f, (lo, hi), degree) in _FUNCTIONS.items():
        c = coefficients(f, (lo, hi), degree)
        p = _core.polynomial_plan(c, "chebyshev", (lo, hi), 64)
        err = _core.chebyshev_max_error(c, f, (lo, hi))
        rows.append({"name": name, "interval": (lo, hi), "degree": degree, "depth": p["depth"],
                     "products": p["products"], "max_error": err})
    return rows


def print_table() -> None:
    """Prints :func:`table` as Markdown (``oboro functions``)."""
    print("| function | interval | degree | depth (levels) | ciphertext products | max error (double) |")
    print("|---|---|---|---|---|---|")
    for r in table():
        lo, hi = r["interval"]
        print(f"| {r['name']} | [{lo:.4g}, {hi:.4g}] | {r['degree']} | {r['depth']} | {r['products']} | "
              f"{r['max_error']:.1e} (2^{math.log2(r['max_error']):.1f}) |")

