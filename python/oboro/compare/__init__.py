"""`oboro compare`: oboro beside other CKKS libraries (OpenFHE, SEAL, desilofhe, Lattigo), per op and
per multiplicative depth, in time and memory (paper 002), whole circuits (--circuits: Chebyshev
series, sigmoid, 1/x, sqrt, matrix x vector) in time, precision and levels, and bootstrapping
(--bootstrap).

Layout, one job per module:
  command.py  options, the plan of worker runs, the run (the CLI entry point)
  peers.py    where each library is installed and how to start it, or why it is skipped
  runner.py   one worker process per (library, preset, depth or group of circuits, threads); its peak RSS
  worker.py   runs in that process (under the library's own interpreter): checks, then times the ops
  protocol.py what runner and worker share: the ops, the circuits, the error tolerances, the inputs' stream
  adapter_*.py one per Python library: its API calls behind one interface (see worker.py)
  report.py   JSON, Markdown tables with ratios against oboro, PNG plots
  bootstrap.py the bootstrap mode (--bootstrap): its plan, runs and JSON; report_bootstrap.py its page
  precision.py the precision metric of that mode, shared with the peers' bootstrap programs
The Lattigo side is the Go program in bench/peers/lattigo/ (same task and result JSON; circuits.go).
"""

from .command import main

__all__ = ["main"]
