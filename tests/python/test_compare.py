"""`oboro compare` on oboro alone (the peers are optional and never needed here): the JSON and
Markdown structure, the skipped-peer lines, positive times, checks, bad input, and the chain mode."""

from __future__ import annotations

import io
import json
import math
import os
import stat
import sys

import pytest

from oboro import cli
from oboro.compare import command, peers, protocol, runner
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
    (["--bootstrap-configs", "default"], "--bootstrap-configs needs --bootstrap"),
    (["--bootstrap", "--chain"], "--bootstrap takes"),
    (["--bootstrap", "--presets", "S1"], "--bootstrap takes"),
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


# ---------------------------------------------------------------- the circuits mode (--circuits)

def _circuit_args(*extra):
    return cli.build_parser().parse_args(["compare", "--circuits", *extra])


def test_circuits_plan_default():
    """N = 2^16, one chain for every library: the most levels any library needs (Lattigo's Goldschmidt
    division of 1/x on [1, 16] at scale 2^40: 10 iterations + the map = 11), dnum 3, 128-bit."""
    import numpy as np
    import oboro

    tasks, settings = command.plan_tasks(_circuit_args())
    assert [k for k, _ in tasks] == ["functions", "matvec"]
    assert all(t["mode"] == "circuits" and t["params"] == settings["params"]["circuits"] for _, t in tasks)
    p = settings["params"]["circuits"]
    assert p["log_n"] == 16 and settings["levels"] == 11 and p["moduli_bits"] == [60] + [40] * 11
    assert p["special_bits"] == [60] * 4 and p["dnum"] == 3 and settings["threads"] == [1, 2]
    functions = {c["key"]: c for c in tasks[0][1]["cases"]}
    assert list(functions) == [f"chebyshev {d}" for d in (7, 15, 31, 63, 127, 255)] + ["sigmoid", "inverse", "sqrt"]
    # the series: the same coefficients every time, |c_k| <= 1/(k + 1)
    c255 = functions["chebyshev 255"]["coeffs"]
    assert c255 == command.chebyshev_coefficients(255) and len(c255) == 256
    assert np.all(np.abs(c255) <= 1.0 / np.arange(1, 257)) and functions["chebyshev 7"]["coeffs"] != c255[:8]
    # the interpolants are oboro's (oboro.functions.sigmoid evaluates the same one)
    sig = functions["sigmoid"]
    assert sig["degree"] == 63 and sig["interval"] == [-8.0, 8.0]
    assert np.allclose(sig["coeffs"], oboro.functions.coefficients(lambda t: 1 / (1 + np.exp(-t)), (-8, 8), 63), atol=1e-15)
    # 1/x and sqrt: the others' degree is that of oboro's own plan at the stated precision
    for kind, which in (("inverse", "inverse"), ("sqrt", "inverse_sqrt")):
        assert functions[kind]["degree"] == oboro.functions.plan_inverse((1, 16), command.circuit_bits(40), which)["degree"]
        assert functions[kind]["bits"] == command.circuit_bits(40) == 20
    assert "coeffs" in functions["sqrt"] and "coeffs" not in functions["inverse"]
    # distinct input streams
    assert len({c["seed"] for c in functions.values()}) == len(functions)
    # the dense slots x slots matrix does not fit in memory at N = 2^16: planned out with the reason
    assert [c["key"] for c in tasks[1][1]["cases"]] == ["matvec 64", "matvec 256"]
    (full, why), = settings["planned_out"].items()
    assert full == "matrix 32768x32768 (full) times vector" and "GiB per library" in why
    needed = {c["key"]: c["levels_needed"] for c in settings["cases"]}
    assert needed["chebyshev 7"] == 4 and needed["chebyshev 255"] == 9 and needed["sigmoid"] == 8
    assert needed["inverse"] == 11 and needed["sqrt"] == 7 and needed["matvec 64"] == 1
    assert settings["tolerance"]["chebyshev 255"] == 2.0**-10 and settings["tolerance"]["matvec 256"] == 1e-2


def test_circuits_scale_bits():
    """--circuits-scale-bits sets every scaling prime of the shared chain and the scale, and the bits
    asked of oboro's 1/x and sqrt with them (and so the degree the others are given); the first prime
    stays 60 bits, so more than 50 bits (the message's room below it) is refused, as is a chain that
    breaks the 128-bit bound."""
    import oboro

    tasks, settings = command.plan_tasks(_circuit_args("--circuits-log-n", "15", "--circuits-scale-bits", "50",
                                                       "--circuits-cases", "chebyshev,inverse,sqrt",
                                                       "--circuits-degrees", "7"))
    p = settings["params"]["circuits"]
    assert p["moduli_bits"] == [60] + [50] * settings["levels"] and p["scale_bits"] == 50
    assert settings["circuit_bits"] == 30.0
    cases = {c["key"]: c for c in tasks[0][1]["cases"]}
    assert cases["inverse"]["bits"] == 30.0
    assert cases["inverse"]["degree"] == oboro.functions.plan_inverse((1, 16), 30.0, "inverse")["degree"] == 63
    # Lattigo's Goldschmidt estimate follows the scale: 10 iterations + the map at 2^50 too
    assert {c["key"]: c["levels_needed"] for c in settings["cases"]}["inverse"] == 11
    with pytest.raises(command.CompareError, match="from 20 to 50"):
        command.plan_tasks(_circuit_args("--circuits-scale-bits", "55"))
    with pytest.raises(command.CompareError, match="128-bit security"):
        command.plan_tasks(_circuit_args("--circuits-log-n", "14", "--circuits-scale-bits", "50",
                                         "--circuits-cases", "chebyshev", "--circuits-degrees", "255"))
    with pytest.raises(command.CompareError, match="--circuits"):
        command.plan_tasks(cli.build_parser().parse_args(["compare", "--circuits-scale-bits", "50"]))


def test_circuits_scale_probe_by_name():
    """x times a constant (the error one level adds) runs when asked for, not by default."""
    tasks, settings = command.plan_tasks(_circuit_args("--circuits-cases", "sigmoid,scale"))
    scale = {c["key"]: c for c in tasks[0][1]["cases"]}["scale"]
    assert scale["constant"] == command.SCALE_CONSTANT and scale["interval"] == [-1.0, 1.0]
    assert {c["key"]: c["levels_needed"] for c in settings["cases"]}["scale"] == 1
    assert "scale" not in command.DEFAULT_CIRCUITS and set(command.DEFAULT_CIRCUITS) < set(protocol.CIRCUITS)


def test_circuits_levels_and_goldschmidt():
    # Lattigo's estimate: (15/16)^(2^k) below 2^(log_n - 41); at least 3 iterations
    assert command.goldschmidt_iterations(16, 40, 1 / 16) == 10
    assert command.goldschmidt_iterations(16, 40, 0.9) == 4 and command.goldschmidt_iterations(16, 40, 1 - 1e-8) == 3
    assert command.circuit_levels({"kind": "chebyshev", "degree": 63, "interval": [-1.0, 1.0]}, 16) == 7
    assert command.circuit_levels({"kind": "sqrt", "degree": 31, "interval": [1.0, 16.0]}, 16) == 7
    assert command.circuit_levels({"kind": "matvec", "size": 64}, 16) == 1
    assert command.circuit_levels({"kind": "scale", "constant": 0.3, "interval": [-1.0, 1.0]}, 16) == 1


def test_circuits_plan_small_ring_and_full_matrix():
    # N = 2^14 fits degree <= 15 and the matrix product (5 levels); the dense 8192 x 8192 does not fit in memory,
    # at N = 2^13 (one level) the dense 4096 x 4096 does
    tasks, settings = command.plan_tasks(_circuit_args("--circuits-log-n", "14", "--circuits-cases", "chebyshev,matvec",
                                                       "--circuits-degrees", "7,15", "--matvec-sizes", "64,full"))
    assert settings["levels"] == 5 and [c["key"] for c in tasks[1][1]["cases"]] == ["matvec 64"]
    assert list(settings["planned_out"]) == ["matrix 8192x8192 (full) times vector"]
    tasks, settings = command.plan_tasks(_circuit_args("--circuits-log-n", "13", "--circuits-cases", "matvec", "--matvec-sizes", "full"))
    assert [k for k, _ in tasks] == ["matvec"] and settings["levels"] == 1 and not settings["planned_out"]
    assert tasks[0][1]["cases"] == [{"key": "matvec 4096", "kind": "matvec", "size": 4096, "seed": 1026}]


def test_circuits_check_encryptions():
    _, settings = command.plan_tasks(_circuit_args("--circuits-cases", "sigmoid"))
    assert settings["check_encryptions"] == command.CIRCUIT_CHECK_ENCRYPTIONS
    tasks, settings = command.plan_tasks(_circuit_args("--circuits-cases", "sigmoid", "--check-encryptions", "25"))
    assert settings["check_encryptions"] == 25 and all(t["check_encryptions"] == 25 for _, t in tasks)


@pytest.mark.parametrize("argv, message", [
    (["--circuits-degrees", "7"], "need --circuits"),
    (["--matvec-sizes", "64"], "need --circuits"),
    (["--check-encryptions", "25"], "need --circuits"),
    (["--circuits-scale-bits", "50"], "--circuits-log-n, --circuits-scale-bits, --circuits-cases"),
    (["--circuits", "--check-encryptions", "0"], "--check-encryptions must be at least 1"),
    (["--circuits", "--chain"], "--circuits takes"),
    (["--circuits", "--presets", "S1"], "--circuits takes"),
    (["--circuits", "--circuits-cases", "fft"], "unknown circuit 'fft'"),
    (["--circuits", "--circuits-log-n", "14"], "11 levels do not fit N = 2^14"),
    (["--circuits", "--circuits-log-n", "14", "--circuits-cases", "matvec", "--matvec-sizes", "100"], "not a power of two"),
    (["--circuits", "--circuits-log-n", "14", "--circuits-cases", "matvec", "--matvec-sizes", "big"], "big is not a power of two"),
])
def test_circuits_bad_input(argv, message):
    err = io.StringIO()
    rc = command.execute(cli.build_parser().parse_args(["compare", *argv]), out=io.StringIO(), err=err)
    assert rc == 2 and message in err.getvalue()


def test_circuit_inputs_are_the_same_for_every_library():
    """The worker's vectorized SplitMix64 gives exactly protocol.uniform_at's doubles (the Go program
    computes the same: bench/peers/lattigo/circuits.go)."""
    from oboro.compare import protocol, worker

    got = worker.uniform(1026, 1000, -8.0, 8.0)
    assert [float(v) for v in got[:50]] == [protocol.uniform_at(1026, i, -8.0, 8.0) for i in range(50)]
    assert got.min() >= -8 and got.max() < 8 and abs(got.mean()) < 1
    x, m, want = worker.circuit_data({"kind": "matvec", "size": 8, "seed": 5}, 4096)
    assert x.shape == (8,) and m.shape == (8, 8) and (want == m @ x).all()
    x, m, want = worker.circuit_data({"kind": "inverse", "interval": [1.0, 16.0], "seed": 11}, 64)
    assert m is None and x.shape == (64,) and (want == 1 / x).all()
    x, m, want = worker.circuit_data({"kind": "scale", "constant": 0.3, "interval": [-1.0, 1.0], "seed": 13}, 64)
    assert m is None and x.min() >= -1 and x.max() < 1 and (want == 0.3 * x).all()


class _FakeCircuits:
    """A CircuitAdapter that 'computes' in the clear: exact, one slow-free call; one case unsupported,
    one that raises and one with a wrong answer."""
    slots = 16

    def decrypt(self, ct, n):
        return ct[:n]

    def consumed(self, ct_in, ct_out):
        return 3

    def circuit(self, case, x, matrix=None):
        import numpy as np

        if case["kind"] == "inverse":
            raise NotImplementedError("no inverse here")
        if case["kind"] == "sqrt":
            raise RuntimeError("boom")
        if case["kind"] == "sigmoid":
            return x, (lambda: np.zeros_like(x)), "wrong"
        return x, (lambda: np.polynomial.chebyshev.chebval(x, case["coeffs"])), f"exact degree {case['degree']}"


def test_run_circuits_records_skips_errors_and_checks():
    from oboro.compare import worker

    cases = [{"key": "chebyshev 3", "kind": "chebyshev", "degree": 3, "interval": [-1.0, 1.0], "coeffs": [0.5, 0.25, 0.1, 0.05], "seed": 1},
             {"key": "sigmoid", "kind": "sigmoid", "degree": 3, "interval": [-8.0, 8.0], "seed": 2},
             {"key": "inverse", "kind": "inverse", "degree": 3, "interval": [1.0, 16.0], "seed": 3},
             {"key": "sqrt", "kind": "sqrt", "degree": 3, "interval": [1.0, 16.0], "seed": 4}]
    r = worker.run_circuits(_FakeCircuits(), {"cases": cases, "repeat": 2, "min_seconds": 0})
    assert r["checks"]["chebyshev 3"] == 0 and r["levels"]["chebyshev 3"] == 3 and r["times"]["chebyshev 3"]["repeats"] == 2
    assert r["chosen"] == {"chebyshev 3": "exact degree 3", "sigmoid": "wrong"}
    assert r["checks"]["sigmoid"] > 0.9  # sigmoid(8) - 0: the runner marks it FAILED
    assert r["skipped_cases"] == {"inverse": "no inverse here"} and r["errors"] == {"sqrt": "RuntimeError: boom"}


class _NoisyCircuits(_FakeCircuits):
    """Each encryption of the input adds a different error to the result: 1e-6, 1e-3 (over the
    tolerance), 1e-5, one per call of circuit()."""

    def __init__(self):
        self.noise = iter([1e-6, 1e-3, 1e-5])

    def circuit(self, case, x, matrix=None):
        import numpy as np

        e = next(self.noise)
        return x, (lambda: np.polynomial.chebyshev.chebval(x, case["coeffs"]) + e), "noisy"


def test_run_circuits_checks_several_encryptions():
    """check_encryptions fresh encryptions: the median error is the precision, the worst decides FAILED."""
    from oboro.compare import worker

    case = {"key": "chebyshev 3", "kind": "chebyshev", "degree": 3, "interval": [-1.0, 1.0], "coeffs": [0.5, 0.25, 0.1, 0.05], "seed": 1}
    r = worker.run_circuits(_NoisyCircuits(), {"cases": [case], "repeat": 1, "min_seconds": 0, "check_encryptions": 3})
    assert abs(r["checks"]["chebyshev 3"] - 1e-5) < 1e-12 and abs(r["check_worst"]["chebyshev 3"] - 1e-3) < 1e-12
    # every slot is off by the same error: the mean bits are those of the median encryption's
    assert abs(r["check_mean_bits"]["chebyshev 3"] - (-math.log2(1e-5))) < 1e-9
    assert runner.failed_checks(r) == {"chebyshev 3": r["check_worst"]["chebyshev 3"]}
    assert runner.failed_checks({"checks": {"chebyshev 3": 1e-5}}) == {}
    tasks, settings = command.plan_tasks(_circuit_args())
    assert settings["check_encryptions"] == 3 and all(t["check_encryptions"] == 3 for _, t in tasks)
    assert command.plan_tasks(_circuit_args("--quick"))[1]["check_encryptions"] == 1


def _circuit_report(outcomes, planned_out=None):
    from oboro.compare import report

    cases = [{"key": "chebyshev 7", "kind": "chebyshev", "degree": 7, "label": "Chebyshev series, degree 7", "levels_needed": 4},
             {"key": "inverse", "kind": "inverse", "degree": 31, "label": "1/x on [1, 16]", "levels_needed": 11},
             {"key": "matvec 64", "kind": "matvec", "size": 64, "label": "matrix 64x64 times vector", "levels_needed": 1}]
    settings = {"cases": cases, "levels": 11, "threads": [1, 2], "repeat": 3, "planned_out": planned_out or {},
                "tolerance": {"chebyshev 7": 2.0**-10, "inverse": 2.0**-10, "matvec 64": 1e-2},
                "params": {"circuits": {"log_n": 16, "moduli_bits": [60] + [40] * 11, "special_bits": [60] * 4, "dnum": 3, "scale_bits": 40}}}
    machine = {"date_utc": "2026-11-24T00:00:00Z", "cpu": "c", "usable_cores": 2, "platform": "p", "python": "3"}
    return report.to_json("circuits", machine, settings, {"seal": "no polynomial evaluator"}, [], outcomes)


def _circuit_outcome(lib, key, threads, times, checks=None, levels=None, chosen=None, skipped=None, errors=None, failed=None, n=2**16):
    result = {"times": {k: {"median_us": v} for k, v in times.items()}, "checks": checks or {k: 2.0**-20 for k in times},
              "levels": levels or {k: 3 for k in times}, "chosen": chosen or {k: f"{lib} way" for k in times},
              "skipped_cases": skipped or {}, "errors": errors or {}, "sizes": {}, "used": {"N": n}, "version": "v"}
    return runner.Outcome(lib, key, threads, result=result, failed_checks=failed or {})


def test_circuits_markdown():
    from oboro.compare import report

    outs = [_circuit_outcome("oboro", "functions", 1, {"chebyshev 7": 1000.0, "inverse": 2000.0}),
            _circuit_outcome("lattigo", "functions", 1, {"chebyshev 7": 3000.0, "inverse": 8000.0}, levels={"chebyshev 7": 3, "inverse": 11},
                             chosen={"chebyshev 7": "polynomial.Evaluator", "inverse": "Goldschmidt, 10 iterations"}),
            _circuit_outcome("openfhe", "functions", 1, {"chebyshev 7": 500.0, "inverse": 900.0}, checks={"chebyshev 7": 2.0**-20, "inverse": 0.5},
                             failed={"inverse": 0.5}),
            _circuit_outcome("desilofhe", "functions", 1, {"chebyshev 7": 4000.0}, skipped={"inverse": "desilofhe has no inverse"}, n=2**15),
            _circuit_outcome("oboro", "functions", 2, {"chebyshev 7": 800.0, "inverse": 1500.0}),
            _circuit_outcome("oboro", "matvec", 1, {}, skipped={"matvec 64": "oboro.linalg.matvec is not in this build"}),
            _circuit_outcome("lattigo", "matvec", 1, {"matvec 64": 5000.0}),
            _circuit_outcome("openfhe", "matvec", 1, {}, errors={"matvec 64": "RuntimeError: boom"})]
    rep = _circuit_report(outs, {"matrix 32768x32768 (full) times vector": "not run: 9 GiB"})
    assert rep["mode"] == "circuits" and rep["runs"][1]["levels"] == {"chebyshev 7": 3, "inverse": 11}
    md = report.markdown_circuits(rep)
    assert "2026-11-24T00:00:00Z" in md and "Q = [60] + 11 x [40] bits" in md and "dnum = 3" in md
    # time: ratios against oboro at the same thread count; FAILED, skipped, error and n/a cells
    assert "| circuit | oboro 1t | openfhe 1t | desilofhe 1t | lattigo 1t | oboro 2t |" in md
    assert "| Chebyshev series, degree 7 | 1.00 ms | 500 us (x0.50) | 4.00 ms (x4.00) (N = 2^15) | 3.00 ms (x3.00) | 800 us |" in md
    assert "| 1/x on [1, 16] | 2.00 ms | FAILED | skipped | 8.00 ms (x4.00) | 1.50 ms |" in md
    assert "| matrix 64x64 times vector | skipped | error | n/a | 5.00 ms | n/a |" in md
    assert "| matrix 32768x32768 (full) times vector | not run | not run |" in md
    # precision in bits and levels (one thread), what each chose, and why a row is missing
    assert "| Chebyshev series, degree 7 | 4 | 20.0 bits, 3 levels | 20.0 bits, 3 levels | 20.0 bits, 3 levels | 20.0 bits, 3 levels |" in md
    assert "| 1/x on [1, 16] | 11 | 20.0 bits, 3 levels | FAILED: 1.0 bits, 3 levels | skipped | 20.0 bits, 11 levels |" in md
    # the mean bits over the slots beside the worst slot, where a run reports them
    outs[0].result["check_mean_bits"] = {"chebyshev 7": 24.26, "inverse": float("nan")}
    with_mean = report.markdown_circuits(_circuit_report(outs))
    assert "| Chebyshev series, degree 7 | 4 | 20.0 bits (mean 24.3), 3 levels | 20.0 bits, 3 levels |" in with_mean
    assert "| 1/x on [1, 16] | 11 | 20.0 bits, 3 levels | FAILED: 1.0 bits, 3 levels |" in with_mean
    assert "(mean m): m is the mean over the slots of -log2 |error|" in with_mean
    assert "Goldschmidt, 10 iterations" in md and "polynomial.Evaluator" in md
    assert "- desilofhe, inverse: skipped: desilofhe has no inverse" in md
    assert "- oboro, matvec 64: skipped: oboro.linalg.matvec is not in this build" in md
    assert "- openfhe 1t, matvec 64: error: RuntimeError: boom" in md
    assert "- openfhe 1t, inverse: FAILED: max error 5.00e-01 above the tolerance 9.77e-04" in md
    assert "- matrix 32768x32768 (full) times vector: not run: 9 GiB" in md and "- skipped: seal: no polynomial evaluator" in md


def test_circuits_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from oboro.compare import report

    rep = _circuit_report([_circuit_outcome("oboro", "functions", 1, {"chebyshev 7": 1000.0, "inverse": 2000.0}),
                           _circuit_outcome("lattigo", "functions", 2, {"chebyshev 7": 3000.0}),
                           _circuit_outcome("oboro", "matvec", 1, {"matvec 64": 300.0})])
    (path,) = report.plot_circuits(rep, str(tmp_path))
    assert path.endswith("polynomial.png") and os.path.getsize(path) > 10_000


def test_bootstrap_plot(tmp_path):
    """bootstrap.png from a bootstrap run's JSON: oboro's configurations and the other libraries, the
    single-threaded ones at one thread only."""
    pytest.importorskip("matplotlib")
    from oboro.compare import report_bootstrap

    def row(config, threads, seconds):
        return {"preset": "B1", "config": config, "threads": threads, "slots": 32768, "bootstrap_median_s": seconds,
                "precision_bits": 26.0, "mean_precision_bits": 28.2, "key_gib": 2.5, "peak_gib": 4.8}

    peer = {"threads": 1, "bootstrap_median_s": 25.0, "precision_bits": 24.7, "mean_precision_bits": 26.9,
            "key_gib": 7.3, "peak_gib": 19.6}
    rep = {"machine": {"cpu": "test CPU", "date_utc": "2026-12-03T00:00:00Z"},
           "rows": [row("default", 1, 12.8), row("default", 2, 6.7), row("low", 1, 16.0)],
           "lattigo": peer, "openfhe": [peer, dict(peer, threads=2, bootstrap_median_s=19.4)], "desilofhe": []}
    assert [(label, [r["threads"] for r in rows]) for label, _, rows in report_bootstrap._series(rep)] == [
        ("oboro (B1)", [1, 2]), ("oboro low (B1)", [1]), ("Lattigo", [1]), ("OpenFHE", [1, 2])]
    (path,) = report_bootstrap.plot(rep, str(tmp_path))
    assert path.endswith("bootstrap.png") and os.path.getsize(path) > 10_000


def test_circuits_oboro_alone(tmp_path, no_peers):
    """A real run of oboro alone on a small ring: the Chebyshev series and a 64 x 64 product, checked,
    with the levels used; SEAL is skipped with the reason."""
    out, err = io.StringIO(), io.StringIO()
    args = cli.build_parser().parse_args(["compare", "--circuits", "--circuits-log-n", "14", "--circuits-cases", "chebyshev,scale,matvec",
                                          "--circuits-degrees", "7", "--matvec-sizes", "64", "--repeat", "1", "--threads", "1",
                                          "--no-progress", "--libraries", "oboro,seal", "--json", str(tmp_path / "p.json"),
                                          "--markdown", str(tmp_path / "p.md")])
    assert command.execute(args, out=out, err=err) == 0, err.getvalue() + out.getvalue()
    rep = json.loads((tmp_path / "p.json").read_text())
    assert rep["mode"] == "circuits" and "SEAL has no polynomial evaluator" in rep["skipped"]["seal"]
    fn, mv = rep["runs"]
    assert (fn["key"], mv["key"]) == ("functions", "matvec") and fn["status"] == mv["status"] == "ok"
    assert fn["levels"]["chebyshev 7"] == 3 and fn["checks"]["chebyshev 7"] < 2.0**-15
    assert fn["times"]["chebyshev 7"]["median_us"] > 0 and "polyval" in fn["chosen"]["chebyshev 7"]
    # one product by a constant: one level, the error of its rescale (about 2^-25 at scale 2^40)
    assert fn["levels"]["scale"] == 1 and 2.0**-30 < fn["checks"]["scale"] < 2.0**-20
    if "matvec 64" in mv["skipped_cases"]:  # an oboro from before oboro.linalg.matvec
        assert "linalg.matvec" in mv["skipped_cases"]["matvec 64"]
    else:
        assert mv["levels"]["matvec 64"] == 1 and mv["checks"]["matvec 64"] < 1e-4
    assert rep["settings"]["coefficients"]["chebyshev 7"] == command.chebyshev_coefficients(7)
    md = (tmp_path / "p.md").read_text()
    assert "| Chebyshev series, degree 7 |" in md and "3 levels" in md and "| x times 0.3 (one level) |" in md


def test_circuits_worker_without_circuits_is_refused(tmp_path):
    old = tmp_path / "old.py"
    old.write_text("import json,sys; json.load(sys.stdin); print(json.dumps({'times': {}, 'checks': {}, 'sizes': {}}))")
    o = runner.run_worker(peers.Launch("lattigo", (sys.executable, str(old))), {"threads": 1, "mode": "circuits"}, "functions")
    assert o.result is None and "no circuits mode" in o.error and "make -C bench/peers/lattigo" in o.error


def test_bootstrap_oboro_alone(tmp_path, no_peers):
    """--bootstrap --quick: oboro's default configuration on the test ring BT at 1 thread, its row with
    the figures the page shows (precision against the input, levels, keys, peak), the peers skipped
    with the reason, and the page rendered from the JSON."""
    from oboro.compare import report_bootstrap

    out, err = io.StringIO(), io.StringIO()
    args = cli.build_parser().parse_args(["compare", "--bootstrap", "--quick", "--threads", "1", "--no-progress",
                                          "--libraries", "oboro,lattigo,openfhe,seal,desilofhe", "--json", str(tmp_path / "b.json"),
                                          "--markdown", str(tmp_path / "b.md"), "--plot", str(tmp_path)])
    assert command.execute(args, out=out, err=err) == 0, err.getvalue() + out.getvalue()
    rep = json.loads((tmp_path / "b.json").read_text())
    assert rep["benchmark"] == "bootstrap" and rep["generator"] == "oboro compare --bootstrap"
    assert set(rep["skipped"]) == {"lattigo", "openfhe", "seal", "desilofhe"} and rep["lattigo"] is None
    assert rep["openfhe"] == rep["desilofhe"] == [] and "N = 2^16" in rep["skipped"]["desilofhe"]
    (row,) = rep["rows"]
    assert (row["preset"], row["config"], row["threads"], row["slots"]) == ("BT", "default", 1, 2048)
    assert row["output_level"] == 2 and row["input_level"] == 0 and row["message_ratio_bits"] == 8
    assert row["eval_mod_terms"] == 2  # the automatic two-term sine series
    # measured 29.4 bits (mean 31.8, all ones 26.2, two real 28.7) at BT
    assert row["precision_bits"] > 26 and row["mean_precision_bits"] > row["precision_bits"] and row["constant_precision_bits"] > 23
    assert row["real_pair_precision_bits"] > 25 and 0 < row["bootstrap_min_s"] <= row["bootstrap_median_s"]
    assert row["keys"] > 20 and 0 < row["diagonal_gib"] < row["key_gib"] < 1 and 0 < row["peak_gib"] < 4
    md = (tmp_path / "b.md").read_text()
    assert md == report_bootstrap.render(rep, None, []) + "\nNot measured:\n\n" + "\n".join(
        f"- {lib}: {why}" for lib, why in rep["skipped"].items()) + "\n"
    assert "| oboro | BT | 1 | 2^8 |" in md and "SEAL has no bootstrapping" in md and "Lattigo program" in md
    assert os.path.getsize(tmp_path / "bootstrap.png") > 10_000


def test_bootstrap_plan():
    from oboro.compare import bootstrap

    args = cli.build_parser().parse_args(["compare", "--bootstrap", "--bootstrap-configs", "stc,low"])
    settings = bootstrap.plan(args)
    assert settings["configs"] == {"stc": {"preset": "B1", "options": {"order": "slots_to_coeffs_first"}, "label": "SlotsToCoeffs first"},
                                   "low": {"preset": "B1", "options": {"memory": "low"}, "label": "low memory"}}
    assert settings["threads"] == [1, 2] and settings["runs"] == bootstrap.DEFAULT_RUNS
    full = bootstrap.plan(cli.build_parser().parse_args(["compare", "--bootstrap"]))
    assert list(full["configs"]) == list(bootstrap.CONFIGS) and full["configs"]["b2"]["preset"] == "B2"
    quick = bootstrap.plan(cli.build_parser().parse_args(["compare", "--bootstrap", "--quick"]))
    assert list(quick["configs"]) == ["default"] and quick["configs"]["default"]["preset"] == "BT" and quick["runs"] == 1
    # every configuration is one keygen() accepts: its options are keygen's bootstrap_* keywords
    import oboro

    for preset, options, _ in bootstrap.CONFIGS.values():
        info = oboro.Context.from_preset("BT").bootstrap_info(16, **options)
        assert all(info[k] == v for k, v in options.items())


def test_bootstrap_unknown_configuration_is_refused(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["compare", "--bootstrap", "--bootstrap-configs", "turbo"])
    assert "unknown bootstrap configuration 'turbo'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["polynomial", "polynomial_precision", "polynomial_scale50", "polynomial_precision_scale50",
                                  "matvec_full_slot"])
def test_published_circuits_pages_render_from_their_json(name):
    """The circuits pages the docs cite are what `oboro compare --circuits` wrote from their JSON (not
    typed by hand): the report renders each page again, byte for byte."""
    from pathlib import Path

    from oboro.compare import report

    bench = Path(__file__).resolve().parents[2] / "docs" / "benchmarks"
    run = json.loads((bench / f"{name}.json").read_text())
    assert run["mode"] == "circuits"
    assert report.markdown_circuits(run) == (bench / f"{name}.md").read_text()
