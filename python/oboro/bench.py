"""`oboro bench`: timings of the CKKS primitives through the Python API, per preset and per level.

For each chosen preset the command builds a context and its keys (relinearization, rotation by 1,
conjugation), then times every primitive (OPS: encode + encrypt, decrypt + decode, add, multiply
ct * ct with relinearize and rescale, multiply by a scalar, rotate by 1, conjugate, relinearize,
rescale) at every level from the top level down to the lowest level where the primitive is
possible, or at the levels given with --levels. `oboro bench --help` lists the Python call timed
for each op.

Each measurement calls the operation once to warm up (not counted), then repeatedly until at least
--repeat runs and --min-seconds of timed runs (at most MAX_RUNS runs unless --repeat asks for
more), and reports the median, minimum and maximum time of one call. Only the call is timed: the
operands are made beforehand, and the result is released after the clock has stopped. The times
are those of the Python calls, so they include what a Python program pays on top of the C++ core:
the call itself and, for the ops on a ciphertext (which return a new one and leave the operand as
it is), the copy of the operand that the result starts from.

The results go to stdout as one table per preset, optionally to a JSON file (--json) and to PNG
plots (--plot, needs matplotlib: pip install 'oboro[plot]'). A progress bar goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, TextIO

import numpy as np

import oboro

# Timing and measure live in oboro/timing.py (standard library only), so that `oboro compare`'s
# worker can time other libraries with the same loop under interpreters that cannot import oboro.
from .timing import MAX_RUNS, Timing, measure

#: Default number of timed runs per measurement (at least).
DEFAULT_REPEAT = 5
#: Default minimum timed seconds per measurement (the same as build/bench/bench_primitives).
DEFAULT_MIN_SECONDS = 0.3
#: --quick: enough runs for a median, no time budget; for smoke tests, not for numbers to quote.
QUICK_REPEAT = 3
QUICK_MIN_SECONDS = 0.0
#: Presets at or above this log2(N) take minutes and GBs of memory: warn before running them.
HEAVY_LOG_N = 16
DEFAULT_PRESETS = ("S1", "S2")
#: Schema version of the JSON output; bump it when a field changes meaning or disappears.
JSON_SCHEMA = 1


class BenchError(Exception):
    """Invalid options of `oboro bench` (unknown preset or op, bad levels, threads, paths)."""


# ---- the operations ----------------------------------------------------------------------------


class Operands:
    """The keyed context of one preset and the operands of every op, made on demand per level."""

    def __init__(self, ctx: oboro.Context, seed: int = 42):
        self.ctx = ctx
        # Benchmark inputs only: full slot vectors, so that encoding does the whole FFT.
        rng = np.random.default_rng(seed)
        self.x = rng.uniform(-1.0, 1.0, ctx.slots)
        self.y = rng.uniform(-1.0, 1.0, ctx.slots)
        self._cache: dict[tuple[str, int], oboro.Ciphertext] = {}

    def fresh(self, which: str, level: int) -> oboro.Ciphertext:
        """A fresh encryption of x or y at `level` (standard scale), cached per level."""
        key = (which, level)
        if key not in self._cache:
            self._cache[key] = self.ctx.encrypt(self.x if which == "x" else self.y, level=level)
        return self._cache[key]

    def product(self, level: int) -> oboro.Ciphertext:
        """The size-3 tensor product x * y at `level` (manual mode: neither relinearized nor rescaled).

        At level 0 the operands are encrypted at a smaller scale: the product of two standard scales
        (2^80 at scale 2^40) does not fit under q_0, and the cost of relinearization does not depend
        on the scale.
        """
        ctx = self.ctx
        with ctx.manual():
            if level > 0:
                return self.fresh("x", level) * self.fresh("y", level)
            small = 2.0 ** math.floor((math.log2(ctx.moduli[0]) - 4) / 2)
            return ctx.encrypt(self.x, level=0, scale=small) * ctx.encrypt(self.y, level=0, scale=small)


@dataclass(frozen=True)
class Op:
    """One benchmarked primitive.

    key: the name in --ops and in the JSON; label: the name in tables and plots; call: the Python
    expression timed (for --help); min_level: the lowest level where the op is possible; auto: the
    context mode it is timed in; prepare(operands, level) makes the operands and returns the
    zero-argument call to time.
    """

    key: str
    label: str
    call: str
    min_level: int
    auto: bool
    prepare: Callable[[Operands, int], Callable[[], object]]


def _encrypt(o: Operands, level: int) -> Callable[[], object]:
    return lambda: o.ctx.encrypt(o.x, level=level)


def _decrypt(o: Operands, level: int) -> Callable[[], object]:
    a = o.fresh("x", level)
    return lambda: o.ctx.decrypt(a)


def _add(o: Operands, level: int) -> Callable[[], object]:
    a, b = o.fresh("x", level), o.fresh("y", level)
    return lambda: a + b


def _multiply(o: Operands, level: int) -> Callable[[], object]:
    # Automatic mode, same level and scale: no alignment, one multiply_relin_rescale.
    a, b = o.fresh("x", level), o.fresh("y", level)
    return lambda: a * b


def _mul_scalar(o: Operands, level: int) -> Callable[[], object]:
    # Automatic mode: a real scalar becomes an integer product followed by a rescale (the form
    # users write; manual mode would leave a scale of 2^80 that nothing else here can use).
    a = o.fresh("x", level)
    return lambda: a * 0.75


def _rotate(o: Operands, level: int) -> Callable[[], object]:
    # Manual mode: exactly the key of step 1, never a composition of steps.
    a = o.fresh("x", level)
    return lambda: a.rotate(1)


def _conjugate(o: Operands, level: int) -> Callable[[], object]:
    a = o.fresh("x", level)
    return lambda: a.conj()


def _relinearize(o: Operands, level: int) -> Callable[[], object]:
    p = o.product(level)
    return lambda: p.relinearize()


def _rescale(o: Operands, level: int) -> Callable[[], object]:
    # The realistic input of a rescale: a relinearized product (scale ~ D_l^2).
    r = o.product(level).relinearize()
    return lambda: r.rescale()


#: Every op, in the order of the tables and plots.
OPS: tuple[Op, ...] = (
    Op("encrypt", "encode + encrypt", "ctx.encrypt(x, level=l), secret-key encryption", 0, False, _encrypt),
    Op("decrypt", "decrypt + decode", "ctx.decrypt(a)", 0, False, _decrypt),
    Op("add", "add (ct + ct)", "a + b", 0, False, _add),
    Op("multiply", "multiply (ct * ct, relin + rescale)", "a * b, automatic mode (fused)", 1, True, _multiply),
    Op("mul_scalar", "multiply by scalar (+ rescale)", "a * 0.75, automatic mode", 1, True, _mul_scalar),
    Op("rotate", "rotate by 1", "a.rotate(1), manual mode (one key switch)", 0, False, _rotate),
    Op("conjugate", "conjugate", "a.conj() (one key switch)", 0, False, _conjugate),
    Op("relinearize", "relinearize", "p.relinearize(), p = a * b in manual mode (size 3)", 0, False, _relinearize),
    Op("rescale", "rescale", "r.rescale(), r = p.relinearize()", 1, False, _rescale),
)
OPS_BY_KEY = {op.key: op for op in OPS}


# ---- timing ------------------------------------------------------------------------------------


# ---- progress ----------------------------------------------------------------------------------


def _fmt_seconds(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(round(s)), 60)
    return f"{m}:{s:02d} min" if m < 60 else f"{m // 60}:{m % 60:02d}:{s:02d} h"


class Progress:
    """A progress bar on a stream (stderr): a redrawn bar on a terminal, plain lines otherwise.

    start(text) announces the measurement about to run (op, preset, level) with done/total, the
    elapsed time and an ETA; advance() marks it done; note(text) prints a line of its own. The ETA
    is the mean time of the finished measurements times the number left: a rough guess when the
    presets differ a lot, but never a made-up figure.
    """

    WIDTH = 24

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True, tty: bool | None = None):
        self.total = total
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.done = 0
        self.t0 = time.perf_counter()
        self._measuring = 0.0  # seconds spent in finished measurements (the ETA's basis)
        self._started: float | None = None
        self._drawn = False

    def _status(self, text: str) -> str:
        elapsed = time.perf_counter() - self.t0
        if self.done and self._measuring > 0:
            eta = _fmt_seconds(self._measuring / self.done * (self.total - self.done))
        else:
            eta = "?"
        width = len(str(self.total))
        return f"{self.done:>{width}}/{self.total}  {text}  elapsed {_fmt_seconds(elapsed)}  ETA {eta}"

    def start(self, text: str) -> None:
        self._started = time.perf_counter()
        if not self.enabled:
            return
        if self.tty:
            filled = self.WIDTH * self.done // max(self.total, 1)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            # \r + erase-line redraws in place; the line is cut at the terminal width to avoid wrapping.
            line = f"[{bar}] {self._status(text)}"
            cols = _terminal_columns(self.stream)
            self.stream.write("\r\x1b[K" + line[: max(cols - 1, 10)])
            self._drawn = True
        else:
            self.stream.write(f"[{self._status(text)}]\n")
        self.stream.flush()

    def advance(self) -> None:
        if self._started is not None:
            self._measuring += time.perf_counter() - self._started
            self._started = None
        self.done += 1

    def note(self, text: str) -> None:
        if not self.enabled:
            return
        self.clear()
        self.stream.write(text + "\n")
        self.stream.flush()

    def clear(self) -> None:
        """Erases the bar from the terminal (before other output goes to the same terminal)."""
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False

    def close(self) -> None:
        """Ends the bar: a final line with the total time."""
        if not self.enabled:
            return
        self.clear()
        self.stream.write(
            f"done: {self.done}/{self.total} measurements in {_fmt_seconds(time.perf_counter() - self.t0)}\n"
        )
        self.stream.flush()


def _terminal_columns(stream: TextIO) -> int:
    try:
        cols = os.get_terminal_size(stream.fileno()).columns
    except (OSError, AttributeError, ValueError):
        cols = 0
    return cols if cols >= 20 else 100  # pseudo-terminals may report 0 columns


# ---- the run -----------------------------------------------------------------------------------


@dataclass
class Result:
    preset: str
    op: str
    label: str
    level: int
    timing: Timing


@dataclass
class PresetRun:
    """The parameters of one preset, the levels timed, and the one-off setup times (not benchmarks)."""

    name: str
    info: dict
    levels: list[int]
    context_seconds: float = 0.0
    keygen_seconds: float = 0.0


@dataclass
class Plan:
    """What a run measures: presets, ops, levels per preset, and the timing settings."""

    presets: list[str]
    ops: list[Op]
    levels: list[int] | None  # None: every level where each op is possible
    threads: int
    repeat: int
    min_seconds: float
    quick: bool = False
    warnings: list[str] = field(default_factory=list)

    def levels_of(self, max_level: int) -> list[int]:
        """The levels timed at a preset, top first."""
        chosen = range(max_level, -1, -1) if self.levels is None else sorted(set(self.levels), reverse=True)
        return list(chosen)

    def tasks(self, preset: str, max_level: int) -> list[tuple[Op, int]]:
        """(op, level) pairs of one preset, op by op; levels where an op is impossible are left out."""
        return [(op, lv) for op in self.ops for lv in self.levels_of(max_level) if lv >= op.min_level]


def make_plan(
    presets: list[str] | None = None,
    ops: list[str] | None = None,
    levels: list[int] | None = None,
    threads: int | None = None,
    repeat: int | None = None,
    min_seconds: float | None = None,
    quick: bool = False,
) -> Plan:
    """Checks the options and returns the plan; raises BenchError with a clear message if one is bad."""
    known = oboro.presets()
    names = list(DEFAULT_PRESETS if not presets else presets)
    for name in names:
        if name not in known:
            raise BenchError(f"unknown preset '{name}' (known presets: {', '.join(known)})")
    names = list(dict.fromkeys(names))  # drop repeats, keep order

    op_keys = list(OPS_BY_KEY) if not ops else list(dict.fromkeys(ops))
    for key in op_keys:
        if key not in OPS_BY_KEY:
            raise BenchError(f"unknown op '{key}' (known ops: {', '.join(OPS_BY_KEY)})")

    warnings = []
    if levels is not None:
        if not levels:
            raise BenchError("--levels is empty")
        for lv in levels:
            if lv < 0:
                raise BenchError(f"bad level {lv}: levels are >= 0")
        for name in names:
            top = oboro.preset_info(name)["levels"]
            above = sorted(lv for lv in set(levels) if lv > top)
            if above:
                raise BenchError(
                    f"level {above[0]} does not exist at preset {name}, whose levels are {top} .. 0 "
                    f"(choose --levels within every chosen preset, or run the presets separately)"
                )
    if threads is not None and threads < 1:
        raise BenchError(f"bad thread count {threads}: it must be >= 1")
    if repeat is None:
        repeat = QUICK_REPEAT if quick else DEFAULT_REPEAT
    if repeat < 1:
        raise BenchError(f"bad --repeat {repeat}: it must be >= 1")
    if min_seconds is None:
        min_seconds = QUICK_MIN_SECONDS if quick else DEFAULT_MIN_SECONDS
    if not (min_seconds >= 0 and math.isfinite(min_seconds)):
        raise BenchError(f"bad --min-seconds {min_seconds}: it must be a finite number >= 0")

    cores = os.cpu_count() or 1
    if threads is not None and threads > cores:
        warnings.append(f"{threads} threads on {cores} cores: the workers share cores, so times will be worse")
    for name in names:
        info = oboro.preset_info(name)
        if info["log_n"] >= HEAVY_LOG_N:
            warnings.append(
                f"preset {name} (N = 2^{info['log_n']}, {info['levels']} levels) takes minutes and "
                f"several GB of memory"
            )
    return Plan(
        presets=names,
        ops=[OPS_BY_KEY[k] for k in op_keys],
        levels=None if levels is None else sorted(set(levels), reverse=True),
        threads=oboro.num_threads() if threads is None else threads,
        repeat=repeat,
        min_seconds=min_seconds,
        quick=quick,
        warnings=warnings,
    )


def run(
    plan: Plan,
    progress: Progress | None = None,
    on_preset: Callable[[PresetRun, list[Result]], None] | None = None,
) -> tuple[list[PresetRun], list[Result]]:
    """Runs the plan; on_preset(run, results) is called after each preset (to print its table).

    Sets the core's thread count to plan.threads for the run and restores it afterwards.
    """
    infos = {name: oboro.preset_info(name) for name in plan.presets}
    total = sum(len(plan.tasks(name, infos[name]["levels"])) for name in plan.presets)
    if progress is None:
        progress = Progress(total, enabled=False)
    progress.total = total
    previous_threads = oboro.num_threads()
    oboro.set_num_threads(plan.threads)
    runs: list[PresetRun] = []
    results: list[Result] = []
    try:
        for name in plan.presets:
            info = infos[name]
            pr = PresetRun(name, info, plan.levels_of(info["levels"]))
            progress.note(f"{name}: building the context and keys (relinearization, rotation by 1, conjugation)...")
            t0 = time.perf_counter()
            ctx = oboro.Context.from_preset(name)
            pr.context_seconds = time.perf_counter() - t0
            t0 = time.perf_counter()
            ctx.keygen(rotations=[1], conjugation=True)
            pr.keygen_seconds = time.perf_counter() - t0
            operands = Operands(ctx)
            mine: list[Result] = []
            for op, level in plan.tasks(name, info["levels"]):
                progress.start(f"{name} {op.key} level {level}")
                with ctx.automatic() if op.auto else ctx.manual():
                    fn = op.prepare(operands, level)
                    timing = measure(fn, plan.repeat, plan.min_seconds)
                mine.append(Result(name, op.key, op.label, level, timing))
                progress.advance()
            del operands, ctx  # free this preset's keys before the next one
            runs.append(pr)
            results.extend(mine)
            if on_preset is not None:
                on_preset(pr, mine)
    finally:
        oboro.set_num_threads(previous_threads)
        progress.close()
    return runs, results


# ---- output ------------------------------------------------------------------------------------


def fmt_us(us: float) -> str:
    """A time in microseconds as '14.5 us', '2.20 ms' or '1.05 s': 3 significant digits, zeros kept."""
    for unit, factor in (("us", 1.0), ("ms", 1e3), ("s", 1e6)):
        v = us / factor
        if v < 999.5 or unit == "s":
            decimals = 2 if v < 9.995 else 1 if v < 99.95 else 0
            return f"{v:.{decimals}f} {unit}"
    raise AssertionError("unreachable")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def table(pr: PresetRun, results: list[Result]) -> list[str]:
    """The lines of one preset's table: one row per op, one column per level (median times)."""
    from .cli import format_table

    info = pr.info
    by = {(r.op, r.level): r.timing for r in results}
    ops = list(dict.fromkeys(r.op for r in results))
    labels = {r.op: r.label for r in results}
    header = ["op"] + [f"level {lv}" for lv in pr.levels]
    rows = [header]
    for key in ops:
        rows.append([labels[key]] + [fmt_us(by[(key, lv)].median_us) if (key, lv) in by else "-" for lv in pr.levels])
    title = (
        f"{pr.name}: N = 2^{info['log_n']}, {info['slots']} slots, {_plural(info['levels'], 'level')}; "
        f"median time per call (context {pr.context_seconds:.2f} s, keys {pr.keygen_seconds:.2f} s)"
    )
    return [title, *format_table(rows, right=range(1, len(header)))]


def machine_info(threads: int) -> dict:
    """CPU model (from /proc/cpuinfo), cores, platform, Python, oboro's build, date, threads."""
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass  # not Linux: keep platform.processor()
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "oboro": oboro.build_info(),
        "threads": threads,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def to_json(plan: Plan, runs: list[PresetRun], results: list[Result]) -> dict:
    """The machine-readable report (schema JSON_SCHEMA); times in microseconds."""
    return {
        "benchmark": "oboro bench",
        "schema": JSON_SCHEMA,
        "unit": "microseconds",
        "machine": machine_info(plan.threads),
        "settings": {
            "presets": plan.presets,
            "ops": [op.key for op in plan.ops],
            "levels": plan.levels,
            "threads": plan.threads,
            "repeat": plan.repeat,
            "min_seconds": plan.min_seconds,
            "max_runs": max(MAX_RUNS, plan.repeat),
            "quick": plan.quick,
            "warm_up_runs": 1,
        },
        "ops": {op.key: {"label": op.label, "min_level": op.min_level, "auto": op.auto} for op in plan.ops},
        "presets": {
            pr.name: {
                **pr.info,
                "levels_timed": pr.levels,
                "context_seconds": pr.context_seconds,
                "keygen_seconds": pr.keygen_seconds,
            }
            for pr in runs
        },
        "results": [
            {
                "preset": r.preset,
                "op": r.op,
                "level": r.level,
                "median_us": r.timing.median_us,
                "min_us": r.timing.min_us,
                "max_us": r.timing.max_us,
                "repeats": r.timing.repeats,
            }
            for r in results
        ],
    }


PLOT_INSTALL_HINT = "pip install 'oboro[plot]'  (or: pip install matplotlib)"


def load_pyplot():
    """matplotlib.pyplot on the Agg backend (files only, no display); BenchError if not installed."""
    try:
        import matplotlib
    except ImportError:
        raise BenchError(f"--plot needs matplotlib, which is not installed; install it with: {PLOT_INSTALL_HINT}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot(runs: list[PresetRun], results: list[Result], directory: str, threads: int) -> list[str]:
    """Writes two PNGs per preset into `directory` and returns their paths.

    ops_<preset>.png: a bar per op at the preset's highest timed level (log scale);
    levels_<preset>.png: time against level, one line per op (log scale).
    """
    plt = load_pyplot()
    os.makedirs(directory, exist_ok=True)
    paths = []
    for pr in runs:
        mine = [r for r in results if r.preset == pr.name]
        if not mine:
            continue
        ops = list(dict.fromkeys(r.op for r in mine))
        labels = {r.op: r.label for r in mine}
        subtitle = f"N = 2^{pr.info['log_n']}, {threads} thread(s), median per call"

        # Time per op at the top timed level; ops impossible there (e.g. rescale at level 0 when
        # only level 0 was asked for) are left out rather than drawn as zero.
        top = max(pr.levels)
        at_top = [r for r in mine if r.level == top]
        fig, ax = plt.subplots(figsize=(9, 4.8), layout="constrained")
        ax.bar(range(len(at_top)), [r.timing.median_us for r in at_top], color="tab:blue")
        ax.errorbar(
            range(len(at_top)),
            [r.timing.median_us for r in at_top],
            yerr=[
                [r.timing.median_us - r.timing.min_us for r in at_top],
                [r.timing.max_us - r.timing.median_us for r in at_top],
            ],
            fmt="none",
            ecolor="black",
            capsize=3,
            linewidth=0.8,
        )
        for i, r in enumerate(at_top):
            ax.annotate(fmt_us(r.timing.median_us), (i, r.timing.median_us), xytext=(0, 3),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(at_top)), [r.label for r in at_top], rotation=30, ha="right")
        ax.set_yscale("log")
        ax.set_ylabel("time per call (µs, log scale; bars: min..max)")
        ax.set_title(f"oboro {pr.name}: time per op at level {top}\n{subtitle}", fontsize=10)
        ax.grid(axis="y", which="major", alpha=0.4)
        path = os.path.join(directory, f"ops_{pr.name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)

        fig, ax = plt.subplots(figsize=(9, 5.2), layout="constrained")
        markers = "osD^v<>ph*"
        for i, key in enumerate(ops):
            pts = sorted((r.level, r.timing.median_us) for r in mine if r.op == key)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[i % len(markers)], label=labels[key])
        ax.set_yscale("log")
        ax.set_xlabel("level (ciphertext primes - 1)")
        ax.set_ylabel("time per call (µs, log scale)")
        ax.set_xticks(sorted(pr.levels))
        ax.invert_xaxis()  # fresh ciphertexts (top level) on the left, as a computation proceeds
        ax.set_title(f"oboro {pr.name}: time per level\n{subtitle}", fontsize=10)
        ax.grid(which="major", alpha=0.4)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
        path = os.path.join(directory, f"levels_{pr.name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


# ---- command line ------------------------------------------------------------------------------


def _comma_list(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list, e.g. S1,S2")
    return items


def _choice_list(text: str, known, what: str, normalize: Callable[[str], str] = str) -> list[str]:
    """A comma-separated list of names of `known`, without repeats; argparse.ArgumentTypeError
    names the first unknown one (as 'unknown <what>')."""
    names = [normalize(t) for t in _comma_list(text)]
    for n in names:
        if n not in known:
            raise argparse.ArgumentTypeError(f"unknown {what} '{n}' (known: {', '.join(known)})")
    return list(dict.fromkeys(names))


def _presets_arg(text: str) -> list[str]:
    return [t.upper() for t in _comma_list(text)]


def _levels_arg(text: str) -> list[int]:
    """'3,1,0' or '0-2' or a mix ('0,2-3') -> list of ints."""
    out: list[int] = []
    for item in _comma_list(text):
        lo, sep, hi = item.partition("-")
        try:
            if sep and lo:
                a, b = int(lo), int(hi)
                if a > b:
                    a, b = b, a
                out.extend(range(a, b + 1))
            else:
                out.append(int(item))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"bad level '{item}': expected integers >= 0 or ranges, e.g. 0,2 or 0-3"
            ) from None
    return out


def _threads_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad thread count '{text}': expected an integer >= 1") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"bad thread count {n}: it must be >= 1")
    return n


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got '{text}'") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {n}")
    return n


def _seconds_arg(text: str) -> float:
    try:
        s = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got '{text}'") from None
    if not (s >= 0 and math.isfinite(s)):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text}")
    return s


DESCRIPTION = (
    "Times the CKKS primitives through the Python API at every level of each preset, from the top\n"
    "level down to the lowest level where the op is possible, and prints one table per preset\n"
    "(median time per call). Ops (--ops; a, b: fresh ciphertexts at level l):\n\n"
    + "\n".join(f"  {op.key:<12} {op.label:<37} {op.call}" for op in OPS)
    + "\n\nEach measurement makes its operands first, calls the op once to warm up, then times\n"
    "repeated calls (--repeat, --min-seconds). The times include the Python call and, for ops on a\n"
    "ciphertext, the copy of the operand that the new result starts from. Progress goes to stderr."
)

EPILOG = """\
examples:
  oboro bench                                  S1 and S2, every op and level
  oboro bench --quick --presets S1             a fast smoke run
  oboro bench --threads 1 --json out.json --plot plots/
  oboro bench --presets S2 --ops multiply,rotate --levels 3,0

--plot needs matplotlib: pip install 'oboro[plot]'.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of `oboro bench` (used by oboro.cli and by build_parser())."""
    p.add_argument(
        "--presets",
        type=_presets_arg,
        default=None,
        metavar="LIST",
        help=f"comma-separated presets to time (default: {','.join(DEFAULT_PRESETS)}); "
        f"S4 takes minutes and several GB of memory, so it runs only when named",
    )
    p.add_argument(
        "--ops",
        type=_comma_list,
        default=None,
        metavar="LIST",
        help=f"comma-separated ops to time (default: all): {','.join(OPS_BY_KEY)}",
    )
    p.add_argument(
        "--levels",
        type=_levels_arg,
        default=None,
        metavar="LIST",
        help="levels to time, e.g. 3,0 or 0-2 (default: every level from the top down to the lowest "
        "where each op is possible); each must exist at every chosen preset",
    )
    p.add_argument(
        "--threads",
        type=_threads_arg,
        default=None,
        metavar="N",
        help="worker threads of the C++ core, oboro.set_num_threads(N) (default: the current setting, "
        "i.e. OBORO_NUM_THREADS or all hardware threads)",
    )
    p.add_argument(
        "--repeat",
        type=_positive_int,
        default=None,
        metavar="R",
        help=f"minimum number of timed runs per measurement, after one warm-up run "
        f"(default {DEFAULT_REPEAT}, --quick {QUICK_REPEAT})",
    )
    p.add_argument(
        "--min-seconds",
        type=_seconds_arg,
        default=None,
        metavar="S",
        help=f"keep running each measurement until its timed runs add up to S seconds, at most "
        f"{MAX_RUNS} runs unless --repeat asks for more (default {DEFAULT_MIN_SECONDS}, --quick {QUICK_MIN_SECONDS})",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"fast smoke run: --repeat {QUICK_REPEAT} and --min-seconds {QUICK_MIN_SECONDS} unless given "
        f"(numbers are noisier)",
    )
    p.add_argument("--json", metavar="PATH", default=None, help="write the results as JSON to PATH")
    p.add_argument(
        "--plot",
        metavar="DIR",
        default=None,
        help="write PNG plots to DIR (created if needed): ops_<preset>.png (time per op at the top level) "
        "and levels_<preset>.png (time per level); needs matplotlib (pip install 'oboro[plot]')",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress output on stderr")


def build_parser() -> argparse.ArgumentParser:
    """The parser of `oboro bench` on its own (for main(argv))."""
    p = argparse.ArgumentParser(
        prog="oboro bench", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(p)
    return p


def _check_output_paths(json_path: str | None, plot_dir: str | None) -> None:
    """Fails before the (long) run if the results could not be written afterwards."""
    if json_path is not None:
        if os.path.isdir(json_path):
            raise BenchError(f"--json {json_path}: is a directory")
        parent = os.path.dirname(os.path.abspath(json_path))
        if not os.path.isdir(parent):
            raise BenchError(f"--json {json_path}: the directory {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise BenchError(f"--json {json_path}: the directory {parent} is not writable")
    if plot_dir is not None and os.path.exists(plot_dir) and not os.path.isdir(plot_dir):
        raise BenchError(f"--plot {plot_dir}: exists and is not a directory")


def execute(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Runs `oboro bench` for parsed arguments; returns the exit code (0 ok, 1 missing matplotlib, 2 bad input)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        plan = make_plan(
            presets=args.presets,
            ops=args.ops,
            levels=args.levels,
            threads=args.threads,
            repeat=args.repeat,
            min_seconds=args.min_seconds,
            quick=args.quick,
        )
        _check_output_paths(args.json, args.plot)
    except BenchError as e:
        print(f"oboro bench: error: {e}", file=err)
        return 2
    if args.plot is not None:
        # Checked before the run, which can take minutes, rather than after it.
        try:
            load_pyplot()
        except BenchError as e:
            print(f"oboro bench: error: {e}", file=err)
            return 1
    for w in plan.warnings:
        print(f"oboro bench: warning: {w}", file=err)

    machine = machine_info(plan.threads)
    print(
        f"oboro bench: {machine['cpu']}, {plan.threads} thread(s), oboro {oboro.__version__}; "
        f"median of >= {plan.repeat} runs and >= {plan.min_seconds:g} s per measurement, after 1 warm-up run"
        + ("  [--quick: smoke run, noisy numbers]" if plan.quick else ""),
        file=out,
    )
    out.flush()

    progress = Progress(0, stream=err, enabled=not args.no_progress)

    def print_table(pr: PresetRun, results: list[Result]) -> None:
        progress.clear()  # stdout and stderr often share the terminal: no stale bar above the table
        print(file=out)
        for line in table(pr, results):
            print(line, file=out)
        out.flush()

    try:
        runs, results = run(plan, progress, on_preset=print_table)
    except KeyboardInterrupt:
        print("\noboro bench: interrupted", file=err)
        return 130
    except oboro.Error as e:
        print(f"oboro bench: {type(e).__name__}: {e}", file=err)
        return 1

    if args.json is not None:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(to_json(plan, runs, results), f, indent=2)
            f.write("\n")
        print(f"\nwrote {args.json}", file=out)
    if args.plot is not None:
        for path in plot(runs, results, args.plot, plan.threads):
            print(f"wrote {path}", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`oboro bench [OPTIONS]` (also `python -m oboro.bench`)."""
    return execute(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
