"""The precision metric of `oboro compare --bootstrap`, one implementation for every library's
measurement: oboro's adapter and the peers' bootstrap programs (bench/peers/*/bootstrap.py), which run
under interpreters without oboro and import this file by path (NumPy only). bench_bootstrap (C++,
bench_util.hpp precision_of) and Lattigo's program (errorBits) compute the same figures.
"""

import numpy as np

#: an exact slot counts this many bits (as in the C++ and Go programs)
EXACT_BITS = 60.0


def error_bits(got, want) -> tuple[float, float]:
    """-log2 of the largest complex error over the slots of `want`, and the mean over those slots of
    -log2 |error| (Lattigo's AVG Prec), both at most EXACT_BITS."""
    err = np.abs(np.asarray(got)[: len(want)] - want)
    worst = EXACT_BITS if err.max() == 0 else min(EXACT_BITS, -float(np.log2(err.max())))
    return worst, float(np.mean(-np.log2(np.maximum(err, 2.0**-EXACT_BITS))))
