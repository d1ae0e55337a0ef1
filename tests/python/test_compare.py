"""`oboro compare` on oboro alone (the peers are optional and never needed here): the JSON and
Markdown structure, the skipped-peer lines, positive times, checks, bad input, and the chain mode."""

from __future__ import annotations

import io
import json
import os
import stat
import sys

import pytest

from oboro import cli
from oboro.compare import command, peers, runner
from oboro.compare.protocol import OPS


def _run(tmp_path, *extra):
    out, err = io.StringIO(), io.StringIO()
    args = cli.build_parser().parse_args(["compare", "--quick", "--repeat", "1", "--presets", "S1", "--threads", "1",
                                          "--json", str(tmp_path / "c.json"), "--markdown", str(tmp_path / "c.md"), *extra])
    rc = command.execute(args, out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def no_peers(tmp_path, monkeypatch):
    """Peers looked for where they cannot be (as on CI): no peer venv, no Lattigo program."""
    monkeypatch.setattr(peers, "PEER_VENV_PYTHON", tmp_path / "no-venv" / "python")
    monkeypatch.setattr(peers, "LATTIGO_EXE", tmp_path / "no-go")
    for var in ("OBORO_PEER_PYTHON", "OBORO_LATTIGO"):
        monkeypatch.delenv(var, raising=False)


def test_oboro_alone_json_and_markdown(tmp_path, no_peers):
    rc, out, err = _run(tmp_path, "--libraries", "oboro,lattigo,openfhe")
    assert rc == 0, err
    # each missing peer is a visible "skipped: <why>" line, in the report too
    assert "skipped: lattigo: Lattigo program" in err and "not built" in err
    assert "skipped: openfhe: no interpreter can import openfhe" in err and "install_peers.sh" in err
    rep = json.loads((tmp_path / "c.json").read_text())
    assert rep["benchmark"] == "oboro compare" and rep["mode"] == "ops"
    assert set(rep["skipped"]) == {"lattigo", "openfhe"}
    assert rep["settings"]["params"]["S1"]["log_n"] == 13
    (run,) = rep["runs"]
    assert run["library"] == "oboro" and run["key"] == "S1" and run["threads"] == 1 and run["status"] == "ok"
    assert set(run["times"]) == set(OPS)
    assert all(t["median_us"] > 0 and t["min_us"] <= t["median_us"] <= t["max_us"] for t in run["times"].values())
    # the checks ran and are tight (CKKS at scale 2^40: errors far below the tolerances)
    assert set(run["checks"]) == set(OPS) and all(e < 1e-4 for e in run["checks"].values())
    assert run["sizes"]["relin"] > run["sizes"]["public"] > 0 and run["sizes"]["ciphertext"] > 0
    assert 10 * 2**20 < run["peak_rss_bytes"] < 4 * 2**30
    md = (tmp_path / "c.md").read_text()
    assert md.rstrip() in out  # the same report on stdout and in the file
    assert "| op | oboro 1t |" in md and "## S1: N = 2^13" in md and "skipped: lattigo" in md
    assert "| multiply + relinearize + rescale |" in md and "| peak RSS of the process |" in md
    assert rep["machine"]["date_utc"] in md
    load = rep["machine"]["load_average"]
    assert load["start"] >= 0 and load["end"] >= 0 and "Load average (1 min) at the start and end of the run" in md


def test_missing_python_peer_is_skipped_with_reason(tmp_path, no_peers):
    launch = peers.find("desilofhe", peer_python=str(tmp_path / "nothing-here"))
    if launch.skipped is None:  # installed for this very interpreter: nothing to check
        pytest.skip("desilofhe is installed for this Python")
    assert launch.argv == ()
    assert "no interpreter can import desilofhe" in launch.skipped and "install_peers.sh" in launch.skipped


def test_ratio_against_oboro_in_markdown():
    from oboro.compare import report

    def run(lib, us):
        o = runner.Outcome(lib, "S1", 1, result={"times": {"add": {"median_us": us}}, "sizes": {}, "checks": {"add": 0.0}})
        return o

    rep = report.to_json("ops", {"date_utc": "d", "cpu": "c", "usable_cores": 2, "platform": "p", "python": "3"},
                         {"params": {"S1": {"log_n": 13, "moduli_bits": [60, 40], "special_bits": [60], "dnum": 2, "scale_bits": 40}}},
                         {}, [], [run("oboro", 10.0), run("lattigo", 25.0)])
    md = report.markdown_ops(rep)
    assert "| add (ct + ct) | 10.0 us | 25.0 us (x2.50) |" in md


def test_failed_check_and_crash_are_reported(tmp_path):
    # A fake worker that answers a wrong result, and one that crashes: neither may pass as a measurement.
    bad = tmp_path / "bad.py"
    bad.write_text("import json,sys; json.load(sys.stdin); print(json.dumps({'times': {'add': {'median_us': 1.0}}, "
                   "'checks': {'add': 0.5}, 'sizes': {}}))")
    o = runner.run_worker(peers.Launch("x", (sys.executable, str(bad))), {"threads": 1}, "S1")
    assert o.error is None and o.failed_checks == {"add": 0.5}
    crash = tmp_path / "crash.py"
    crash.write_text("import sys; sys.exit('boom')")
    o = runner.run_worker(peers.Launch("x", (sys.executable, str(crash))), {"threads": 1}, "S1")
    assert o.result is None and "status 1" in o.error and "boom" in o.error


def test_worker_timeout(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("import time; time.sleep(30)")
    o = runner.run_worker(peers.Launch("x", (sys.executable, str(slow))), {"threads": 1}, "S1", timeout_s=0.5)
    assert o.result is None and "timeout" in o.error


def test_chain_mode(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    args = cli.build_parser().parse_args(["compare", "--chain", "--depths", "1,2", "--chain-log-n", "13", "--repeat", "1",
                                          "--min-seconds", "0", "--libraries", "oboro", "--json", str(tmp_path / "ch.json")])
    assert command.execute(args, out=out, err=err) == 0, err.getvalue()
    rep = json.loads((tmp_path / "ch.json").read_text())
    assert rep["mode"] == "chain" and rep["settings"]["depths"] == [1, 2]
    t1, t2 = (r["times"]["chain"]["median_us"] for r in rep["runs"])
    assert 0 < t1 and 0 < t2 and all(r["checks"]["chain"] < 1e-2 for r in rep["runs"])
    assert "| depth | oboro 1t |" in out.getvalue()


@pytest.mark.parametrize("argv, message", [
    (["--presets", "S9"], "unknown preset 'S9'"),
    (["--ops", "divide"], "unknown op 'divide'"),
    (["--depths", "2"], "--depths and --schemes need --chain"),
    (["--schemes", "bfv"], "--depths and --schemes need --chain"),
    (["--chain", "--schemes", "bgv", "--libraries", "oboro,seal"], "no selected library has BGV"),
    (["--chain", "--depths", "2", "--chain-log-n", "13", "--libraries", "lattigo"], "does not fit N = 2^12"),
    (["--chain", "--depths", "10", "--chain-log-n", "13"], "does not fit N = 2^13"),
])
def test_bad_input_is_a_clear_error(argv, message):
    err = io.StringIO()
    rc = command.execute(cli.build_parser().parse_args(["compare", *argv]), out=io.StringIO(), err=err)
    assert rc == 2 and message in err.getvalue()


def test_unknown_library_is_refused(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["compare", "--libraries", "heaan"])
    assert "unknown library 'heaan'" in capsys.readouterr().err


def test_unknown_scheme_is_refused(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["compare", "--chain", "--schemes", "tfhe"])
    assert "unknown scheme 'tfhe'" in capsys.readouterr().err


def test_chain_plan_has_integer_schemes_for_openfhe_and_lattigo_only():
    args = cli.build_parser().parse_args(["compare", "--chain", "--depths", "2,4", "--chain-log-n", "15"])
    tasks, settings = command.plan_tasks(args)
    assert settings["schemes"] == ["ckks", "bfv", "bgv"]
    by_scheme = {}
    for key, t in tasks:
        by_scheme.setdefault(t["scheme"], []).append((key, t["params"]["log_n"], t["params"].get("plain_modulus")))
    # CKKS at N = 2^15, BFV/BGV at N = 2^14 (the same slot count) with paper 002's t = 65537
    assert by_scheme["ckks"] == [("depth 2", 15, None), ("depth 4", 15, None)]
    assert by_scheme["bfv"] == by_scheme["bgv"] == [("depth 2", 14, 65537), ("depth 4", 14, 65537)]
    bfv = next(t for _, t in tasks if t["scheme"] == "bfv")
    assert command.runs_library("openfhe", bfv) and command.runs_library("lattigo", bfv)
    assert not command.runs_library("oboro", bfv) and not command.runs_library("seal", bfv)
    assert all(command.runs_library(lib, tasks[0][1]) for lib in peers.LIBRARIES)
    # oboro alone: no integer scheme is planned
    args = cli.build_parser().parse_args(["compare", "--chain", "--libraries", "oboro", "--chain-log-n", "15"])
    assert command.plan_tasks(args)[1]["schemes"] == ["ckks"]


def test_chain_markdown_labels_schemes():
    from oboro.compare import report

    def run(lib, scheme, us, ok=True):
        return runner.Outcome(lib, "depth 2", 1, scheme=scheme, result={"times": {"chain": {"median_us": us}}, "sizes": {},
                              "checks": {"chain": 0.0}}, failed_checks={} if ok else {"chain": 3.0}, peak_rss_bytes=2**20)

    rep = report.to_json("chain", {"date_utc": "d", "cpu": "c", "usable_cores": 2, "platform": "p", "python": "3"},
                         {"depths": [2], "chain_log_n": 15, "schemes": ["ckks", "bgv"],
                          "params": {"ckks depth 2": {"log_n": 15}, "bgv depth 2": {"log_n": 14}}}, {}, [],
                         [run("oboro", "ckks", 1000.0), run("lattigo", "bgv", 2000.0), run("openfhe", "bgv", 5.0, ok=False),
                          run("desilofhe", "ckks", 500.0)])
    rep["runs"][1]["used"] = {"N": 2**14}  # the task's ring: no mark
    rep["runs"][3]["used"] = {"N": 2**13}  # desilofhe's own choice: marked
    md = report.markdown_chain(rep)
    assert "| depth | oboro 1t | lattigo BGV 1t | openfhe BGV 1t | desilofhe 1t |" in md
    assert "| 2 | 1.00 ms | 2.00 ms | FAILED | 500 us (N = 2^13) |" in md
    assert "FAILED: openfhe BGV 1t depth 2: checks failed: chain error 3.00e+00" in md
    assert "t = 65537 at N = 2^14" in md


def test_thread_anomaly_is_noted():
    from oboro.compare import report

    def run(lib, threads, add_us, mul_us):
        return runner.Outcome(lib, "S1", threads, result={"times": {"add": {"median_us": add_us}, "multiply": {"median_us": mul_us}},
                                                          "sizes": {}, "checks": {}})

    rep = report.to_json("ops", {}, {}, {}, [], [run("openfhe", 1, 34.0, 3000.0), run("openfhe", 2, 16000.0, 2000.0),
                                                 run("oboro", 1, 10.0, 700.0), run("oboro", 2, 12.0, 500.0)])
    notes = report.thread_anomalies(rep)
    assert len(notes) == 1  # only OpenFHE's add: a 2t multiply faster than 1t, oboro's 1.2x are no anomaly
    assert notes[0].startswith("openfhe 2t S1 add: median 16.0 ms is x471 its 1t median (34.0 us)") and "busy core" in notes[0]


def test_omp_wait_policy_reaches_every_worker(tmp_path, monkeypatch):
    env_dump = tmp_path / "env.py"
    env_dump.write_text("import json,os,sys; json.load(sys.stdin); print(json.dumps({'times': {}, 'checks': {}, 'sizes': {}, "
                        "'policy': os.environ.get('OMP_WAIT_POLICY'), 'omp': os.environ.get('OMP_NUM_THREADS')}))")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")  # the caller's own setting does not leak into the default
    launch = peers.Launch("x", (sys.executable, str(env_dump)))
    assert runner.run_worker(launch, {"threads": 2}, "S1").result["policy"] is None
    o = runner.run_worker(launch, {"threads": 2}, "S1", omp_wait_policy="PASSIVE")
    assert o.result["policy"] == "PASSIVE" and o.result["omp"] == "2"


def test_integer_chain_with_installed_peers(tmp_path):
    """BFV and BGV in OpenFHE and Lattigo when installed (scripts/install_peers.sh): exact results."""
    libs = [lib for lib in ("openfhe", "lattigo") if peers.find(lib).skipped is None]
    if not libs:
        pytest.skip("neither OpenFHE nor Lattigo is installed")
    args = cli.build_parser().parse_args(["compare", "--chain", "--depths", "2", "--chain-log-n", "14", "--schemes", "bfv,bgv",
                                          "--repeat", "1", "--min-seconds", "0", "--no-progress", "--libraries", ",".join(libs),
                                          "--json", str(tmp_path / "ch.json")])
    out, err = io.StringIO(), io.StringIO()
    assert command.execute(args, out=out, err=err) == 0, err.getvalue() + out.getvalue()
    runs = json.loads((tmp_path / "ch.json").read_text())["runs"]
    assert {(r["library"], r["scheme"]) for r in runs} == {(lib, s) for lib in libs for s in ("bfv", "bgv")}
    assert all(r["status"] == "ok" and r["checks"]["chain"] == 0 and r["used"]["N"] == 2**13 for r in runs)


def test_worker_that_ignores_the_scheme_is_refused(tmp_path):
    # e.g. a Lattigo program built before BFV/BGV: it would time CKKS under a BFV label
    old = tmp_path / "old.py"
    old.write_text("import json,sys; json.load(sys.stdin); print(json.dumps({'times': {'chain': {'median_us': 1.0}}, "
                   "'checks': {'chain': 0.0}, 'sizes': {}}))")
    o = runner.run_worker(peers.Launch("lattigo", (sys.executable, str(old))), {"threads": 1, "scheme": "bfv"}, "depth 2")
    assert o.result is None and "ran CKKS instead of BFV" in o.error and "make -C bench/peers/lattigo" in o.error
