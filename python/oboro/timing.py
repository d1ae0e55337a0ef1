"""The timing loop of the benchmarks: median, min and max time of one call (standard library only).

Used by `oboro bench` and by `oboro compare`'s worker, which runs under other Python interpreters
(e.g. the CPython 3.10 of the OpenFHE wheel) where the oboro package itself cannot be imported: keep
this module free of oboro and of third-party imports.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass
from typing import Callable

#: Runs per measurement stop here even if min_seconds has not passed (fast ops at small N would
#: otherwise run tens of thousands of times for no better median).
MAX_RUNS = 1000


@dataclass
class Timing:
    """Times of one call in microseconds over `repeats` timed runs (the warm-up run excluded)."""

    median_us: float
    min_us: float
    max_us: float
    repeats: int


def measure(fn: Callable[..., object], repeat: int, min_seconds: float, max_runs: int = MAX_RUNS,
            warm_up: bool = True, setup: Callable[[], object] | None = None) -> Timing:
    """Times fn(): one warm-up call, then runs until `repeat` runs and `min_seconds` of timed runs.
    warm_up=False when the caller has just made that call itself (e.g. to check its result: the
    circuits of `oboro compare`, where one call can take seconds). With `setup`, each run (the
    warm-up too) first calls setup() outside the clock and times fn(what setup returned): an op that
    needs a fresh object each time (a key generated into a context that has none yet).

    Stops at max(max_runs, repeat) runs even if min_seconds has not passed. The garbage collector
    is off while timing (as in timeit) so that a collection triggered by one run does not land in
    its time; each result is released after the clock has stopped, so freeing it is not timed.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    if warm_up:
        # warm-up: first-call costs (allocator growth, caches) are not part of the op
        fn() if setup is None else fn(setup())
    limit = max(max_runs, repeat)
    times: list[float] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        clock = time.perf_counter
        timed = 0.0
        while len(times) < limit:
            if setup is None:
                t0 = clock()
                result = fn()
                t1 = clock()
            else:
                arg = setup()
                t0 = clock()
                result = fn(arg)
                t1 = clock()
                del arg
            del result
            times.append(t1 - t0)
            timed += t1 - t0
            if len(times) >= repeat and timed >= min_seconds:
                break
    finally:
        if gc_was_enabled:
            gc.enable()
    return Timing(
        median_us=statistics.median(times) * 1e6,
        min_us=min(times) * 1e6,
        max_us=max(times) * 1e6,
        repeats=len(times),
    )
