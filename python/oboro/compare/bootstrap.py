"""`oboro compare --bootstrap`: oboro's bootstrapping beside Lattigo's and OpenFHE's, in one run.

Each measurement is a process of its own, one at a time (each needs most of the memory at N = 2^16):
- oboro through its Python API (worker.py, mode "bootstrap": adapter_oboro.bootstrap_row), one
  process per configuration and thread count;
- Lattigo's default set N16QP1546H192H32 (bench/peers/lattigo, mode "bootstrap"), on one thread
  (Lattigo runs an op on one goroutine);
- OpenFHE's EvalBootstrap (bench/peers/openfhe/bootstrap.py, under the peers' Python), per thread count;
- desilofhe's bootstrap with its small key (bench/peers/desilofhe/bootstrap.py), on one thread and with
  one timed run: about 150 s per bootstrap, and 2 threads gave no speed-up (PEERS.md). Its ring is
  fixed at N = 2^16, so --quick leaves it out.
The rows go to report_bootstrap.render (the Markdown) and to one JSON file with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TextIO

from .. import bench
from . import peers
from .report_bootstrap import plot, render
from .runner import Outcome, run_worker

#: oboro's configurations: name -> (preset, keygen's bootstrap options without the "bootstrap_" prefix, what it is)
CONFIGS = {
    "default": ("B1", {}, "B1 as keygen(bootstrap=True) makes it (EvalMod's two-term sine series, message ratio 2^8)"),
    "angles2": ("B1", {"double_angles": 2}, "EvalMod with 2 double angles"),
    "sine": ("B1", {"eval_mod_terms": 1}, "EvalMod's sine (one term, one level fewer) at its message ratio 2^12"),
    "sine-ratio8": ("B1", {"eval_mod_terms": 1, "message_ratio_bits": 8}, "EvalMod's sine at Lattigo's message ratio 2^8"),
    "stc": ("B1", {"order": "slots_to_coeffs_first"}, "SlotsToCoeffs first"),
    "fast": ("B1", {"memory": "fast"}, "the default's keys stored whole (memory='fast')"),
    "seeded": ("B1", {"memory": "seeded"}, "the default's keys all seeded (memory='seeded')"),
    "low": ("B1", {"memory": "low"}, "low memory"),
    "b2": ("B2", {}, "B2, high precision (two iterations)"),
}
#: --quick: the insecure test ring for every configuration, Lattigo's set on N = 2^12 ("test"), OpenFHE's --quick
QUICK_PRESET = "BT"
LATTIGO_SET, LATTIGO_QUICK_SET = "N16QP1546H192H32", "test"
#: the peers' bootstrap programs (in the repository, not in the package), run under the peers' Python
PEER_SCRIPTS = {lib: peers.ROOT / "bench" / "peers" / lib / "bootstrap.py" for lib in ("openfhe", "desilofhe")}
#: timed bootstraps after the first (untimed, checked) one; --quick: 1
DEFAULT_RUNS = 3
#: the libraries that bootstrap, and why the others are left out
NO_BOOTSTRAP = {"seal": "SEAL has no bootstrapping"}
DESILOFHE_QUICK = "desilofhe bootstraps only at N = 2^16 (Engine(bootstrap=True) fixes its ring): not in --quick"
#: a bootstrap worker takes minutes at N = 2^16 (key generation, a warm-up and the timed runs)
TIMEOUT_S = 3600


def configs_arg(text: str) -> list[str]:
    return bench._choice_list(text, CONFIGS, "bootstrap configuration")


def plan(args: argparse.Namespace) -> dict:
    """The configurations, thread counts and runs of this run (the report's settings)."""
    names = args.bootstrap_configs or (["default"] if args.quick else list(CONFIGS))
    return {
        "configs": {n: {"preset": QUICK_PRESET if args.quick else CONFIGS[n][0], "options": CONFIGS[n][1],
                        "label": CONFIGS[n][2]} for n in names},
        "threads": args.threads or [1, 2],
        "runs": args.repeat or (1 if args.quick else DEFAULT_RUNS),
        "quick": args.quick,
        "seed": 11,
    }


def launches(args: argparse.Namespace, settings: dict) -> tuple[list[tuple[str, int, peers.Launch, dict]], dict]:
    """[(what, threads, launch, task)] in run order, and {library: why skipped}."""
    libs = ["oboro"] + [lib for lib in (args.libraries or peers.LIBRARIES) if lib != "oboro"]
    skipped = {lib: NO_BOOTSTRAP[lib] for lib in libs if lib in NO_BOOTSTRAP}
    runs, quick, repeat = [], settings["quick"], settings["runs"]
    oboro = peers.find("oboro")
    for name, c in settings["configs"].items():
        for t in settings["threads"]:
            runs.append((f"oboro {name}", t, oboro, {"mode": "bootstrap", "library": "oboro", "config": name,
                                                     "preset": c["preset"], "options": c["options"], "threads": t,
                                                     "repeat": repeat, "seed": settings["seed"]}))
    if "lattigo" in libs:
        la = peers.find("lattigo", lattigo=args.lattigo)
        if la.skipped:
            skipped["lattigo"] = la.skipped
        else:  # one goroutine per bootstrap: its one-thread figure stands for every thread count
            runs.append(("lattigo", 1, la, {"mode": "bootstrap", "param_set": LATTIGO_QUICK_SET if quick else LATTIGO_SET,
                                            "repeat": repeat, "threads": 1, "seed": 1}))
    for lib in ("openfhe", "desilofhe"):
        if lib not in libs:
            continue
        la, script = peers.find(lib, args.peer_python), PEER_SCRIPTS[lib]
        if lib == "desilofhe" and quick:
            skipped[lib] = DESILOFHE_QUICK
        elif la.skipped:
            skipped[lib] = la.skipped
        elif not script.is_file():
            skipped[lib] = f"{script} not found (it is in the repository, not in the package)"
        elif lib == "openfhe":
            for t in settings["threads"]:
                argv = (la.argv[0], str(script), "--threads", str(t), "--repeat", str(repeat)) + (("--quick",) if quick else ())
                runs.append((lib, t, peers.Launch(lib, argv), {"mode": "bootstrap", "threads": t}))
        else:
            argv = (la.argv[0], str(script), "--threads", "1", "--repeat", "1")
            runs.append((lib, 1, peers.Launch(lib, argv), {"mode": "bootstrap", "threads": 1}))
    return runs, skipped


def to_json(settings: dict, outcomes: list[tuple[str, Outcome]], skipped: dict) -> dict:
    """Every figure of the run: oboro's rows (the keys of bench_bootstrap's rows), Lattigo's and
    OpenFHE's results as their programs wrote them, what was skipped and what failed."""
    machine = bench.machine_info(settings["threads"][0])
    machine["hardware_threads"] = os.cpu_count()
    rows = [o.result for what, o in outcomes if what.startswith("oboro") and o.result]
    lattigo = next((o.result for what, o in outcomes if what == "lattigo" and o.result), None)
    openfhe = [o.result for what, o in outcomes if what == "openfhe" and o.result]
    desilofhe = [o.result for what, o in outcomes if what == "desilofhe" and o.result]
    failed = {f"{what} {o.threads}t": o.error for what, o in outcomes if o.error}
    return {"benchmark": "bootstrap", "generator": "oboro compare --bootstrap", "machine": machine,
            "runs": settings["runs"], "settings": settings, "rows": rows, "lattigo": lattigo, "openfhe": openfhe,
            "desilofhe": desilofhe, "skipped": skipped, "failed": failed}


def markdown(rep: dict) -> str:
    text = render(rep, rep["lattigo"], rep["openfhe"], rep["desilofhe"])
    extra = [f"- {lib}: {why}" for lib, why in rep["skipped"].items()] + [f"- {what} FAILED: {why}" for what, why in rep["failed"].items()]
    return text + ("\nNot measured:\n\n" + "\n".join(extra) + "\n" if extra else "")


def execute(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Runs the bootstrap comparison; exit code 0 ok, 1 a worker failed."""
    settings = plan(args)
    runs, skipped = launches(args, settings)
    for lib, why in skipped.items():
        print(f"oboro compare: skipped: {lib}: {why}", file=err)
    progress = bench.Progress(len(runs), stream=err, enabled=not args.no_progress)
    outcomes = []
    try:
        for what, t, la, task in runs:
            progress.start(f"bootstrap: {what} {t}t")
            o = run_worker(la, task, what, max(args.timeout, TIMEOUT_S))
            progress.advance()
            if o.error:
                progress.note(f"oboro compare: {what} {t}t FAILED: {o.error}")
            outcomes.append((what, o))
    except KeyboardInterrupt:
        print("\noboro compare: interrupted", file=err)
        return 130
    progress.close()
    rep = to_json(settings, outcomes, skipped)
    md = markdown(rep) if rep["rows"] else "No oboro row was measured.\n"
    print(md, file=out)
    for path, text in ((args.json, json.dumps(rep, indent=1) + "\n"), (args.markdown, md)):
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {path}", file=out)
    if args.plot is not None and rep["rows"]:
        for path in plot(rep, args.plot):
            print(f"wrote {path}", file=out)
    return 1 if rep["failed"] or not rep["rows"] else 0

