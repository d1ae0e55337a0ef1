"""Runs the workers of `oboro compare`: one process per (library, preset or depth, threads).

Each worker gets its task as JSON on stdin and answers JSON on stdout, including its own peak
resident memory (VmHWM, read the same way by the Python worker and the Go program). The runner's
os.wait4 rusage is only a fallback: Linux carries ru_maxrss across fork + exec, so it would include
the runner's own peak. The runner sets the thread-count variables of every library's runtime
(OpenMP, Go, oboro) in the worker's environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from .peers import Launch
from .protocol import tolerance

#: a worker that runs longer than this is stopped and reported as failed (S4 at one thread with
#: SEAL's dnum = #Q keys takes minutes)
DEFAULT_TIMEOUT_S = 1800


@dataclass
class Outcome:
    """One worker run: its result (None if it failed), why it failed, its peak RSS and wall time."""

    library: str
    key: str  # preset name (ops), "depth <d>" (chain) or the group of circuits ("functions", "matvec")
    threads: int
    scheme: str = "ckks"  # or "bfv" / "bgv" (chain mode)
    result: dict | None = None
    error: str | None = None
    peak_rss_bytes: int = 0
    wall_seconds: float = 0.0
    failed_checks: dict = field(default_factory=dict)


def thread_env(threads: int, omp_wait_policy: str | None = None) -> dict:
    """The environment of a worker that may use `threads` threads (every runtime's own variable), and
    OMP_WAIT_POLICY when given (else the runtime's default, also when the caller's environment has one)."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OBORO_NUM_THREADS", "GOMAXPROCS"):
        env[var] = str(threads)
    env.pop("OMP_WAIT_POLICY", None)
    if omp_wait_policy is not None:
        env["OMP_WAIT_POLICY"] = omp_wait_policy
    return env


def run_worker(launch: Launch, task: dict, key: str, timeout_s: float = DEFAULT_TIMEOUT_S,
               omp_wait_policy: str | None = None) -> Outcome:
    """Starts the worker, feeds it the task, waits for it and returns its Outcome (never raises for a
    worker's failure: a crash, a timeout or bad output become Outcome.error)."""
    out = Outcome(launch.library, key, task["threads"], scheme=task.get("scheme", "ckks"))
    with tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        t0 = time.perf_counter()
        proc = subprocess.Popen(launch.argv, stdin=subprocess.PIPE, stdout=fout, stderr=ferr, env=thread_env(task["threads"], omp_wait_policy))
        proc.stdin.write(json.dumps(task).encode())
        proc.stdin.close()
        status, rusage = _wait(proc, timeout_s)
        out.wall_seconds = time.perf_counter() - t0
        out.peak_rss_bytes = rusage.ru_maxrss * 1024 if rusage is not None else 0  # Linux: KiB
        fout.seek(0)
        ferr.seek(0)
        stdout, stderr = fout.read().decode(errors="replace"), ferr.read().decode(errors="replace")
    if status is None:
        out.error = f"stopped after {timeout_s:g} s (timeout)"
        return out
    if status != 0:
        tail = stderr.strip().splitlines()[-3:]
        out.error = f"worker exited with status {status}: " + " | ".join(tail)
        return out
    try:
        out.result = json.loads(stdout)
    except ValueError:
        out.error = f"worker printed no JSON result: {stdout[:200]!r}"
        return out
    ran = out.result.get("scheme", "ckks")  # a worker from before BFV/BGV ignores the task's scheme
    if ran != out.scheme:
        out.result, out.error = None, (f"the worker ran {ran.upper()} instead of {out.scheme.upper()}: it is out of date "
                                       f"(rebuild the Lattigo program: make -C bench/peers/lattigo)")
        return out
    if task.get("mode") == "circuits" and "chosen" not in out.result:  # e.g. a Lattigo program from before --circuits
        out.result, out.error = None, ("the worker has no circuits mode: it is out of date (rebuild the Lattigo "
                                       "program: make -C bench/peers/lattigo)")
        return out
    # The worker's own VmHWM: the rusage of the child includes the parent's peak (see worker.py).
    out.peak_rss_bytes = out.result.get("peak_rss_bytes") or out.peak_rss_bytes
    out.failed_checks = failed_checks(out.result)
    return out


def failed_checks(result: dict) -> dict:
    """The checks of a worker's result over their tolerance: {op: error}. A check on several
    encryptions (circuits: check_worst) fails on its worst error."""
    checks = {**result.get("checks", {}), **(result.get("check_worst") or {})}
    return {op: err for op, err in checks.items() if not err <= tolerance(op)}


def _wait(proc: subprocess.Popen, timeout_s: float):
    """(exit status or None on timeout, rusage of the child) via os.wait4, polling for the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
            return proc.returncode, rusage
        if time.monotonic() > deadline:
            proc.kill()
            _, _, rusage = os.wait4(proc.pid, 0)
            proc.returncode = -9
            return None, rusage
        time.sleep(0.02)
