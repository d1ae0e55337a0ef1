"""`oboro bench`: the timed calls do what their names say, and the command's JSON, PNGs, tables,
progress output and errors are right. Timings are never asserted beyond being positive and ordered
(min <= median <= max): they depend on the machine."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

import oboro
from oboro import bench, cli

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
S1_LEVELS = oboro.preset_info("S1")["levels"]


def _expected_levels(op: bench.Op, top: int) -> list[int]:
    return list(range(top, op.min_level - 1, -1))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One real `python -m oboro bench --quick --presets S1 --json --plot` run, shared by the tests."""
    pytest.importorskip("matplotlib")
    d = tmp_path_factory.mktemp("bench")
    json_path, plot_dir = d / "out.json", d / "plots"
    r = subprocess.run(
        [sys.executable, "-m", "oboro", "bench", "--quick", "--presets", "S1", "--threads", "1",
         "--json", str(json_path), "--plot", str(plot_dir)],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r, json.loads(json_path.read_text()), plot_dir


# ---- the command's outputs ---------------------------------------------------------------------


def test_json_schema_and_values(quick_run):
    _, data, _ = quick_run
    assert data["benchmark"] == "oboro bench" and data["schema"] == bench.JSON_SCHEMA
    assert data["unit"] == "microseconds"
    m = data["machine"]
    for key in ("cpu", "cores", "python", "oboro", "threads", "date_utc"):
        assert key in m, key
    assert isinstance(m["cpu"], str) and m["cpu"]
    assert m["cores"] >= 1 and m["threads"] == 1
    assert m["oboro"]["version"] == oboro.__version__
    s = data["settings"]
    assert s["presets"] == ["S1"] and s["quick"] is True and s["threads"] == 1
    assert s["repeat"] == bench.QUICK_REPEAT and s["min_seconds"] == bench.QUICK_MIN_SECONDS
    assert s["ops"] == [op.key for op in bench.OPS]
    p = data["presets"]["S1"]
    assert p["log_n"] == 13 and p["levels"] == S1_LEVELS and p["levels_timed"] == list(range(S1_LEVELS, -1, -1))
    assert p["keygen_seconds"] > 0
    assert set(data["ops"]) == {op.key for op in bench.OPS}

    seen: dict[str, list[int]] = {}
    for r in data["results"]:
        assert set(r) == {"preset", "op", "level", "median_us", "min_us", "max_us", "repeats"}
        assert r["preset"] == "S1"
        assert 0 < r["min_us"] <= r["median_us"] <= r["max_us"]
        assert r["repeats"] >= bench.QUICK_REPEAT
        seen.setdefault(r["op"], []).append(r["level"])
    # Every op at every level where it is possible, each once.
    assert seen == {op.key: _expected_levels(op, S1_LEVELS) for op in bench.OPS}


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_plots_are_png_files(quick_run):
    r, _, plot_dir = quick_run
    for name in ("ops_S1.png", "levels_S1.png"):
        path = plot_dir / name
        assert path.is_file(), name
        w, h = _png_size(path)
        assert w > 200 and h > 200
        assert f"wrote {path}" in r.stdout


def test_table_on_stdout(quick_run):
    r, data, _ = quick_run
    out = r.stdout
    assert "S1: N = 2^13" in out
    assert f"level {S1_LEVELS}" in out and "level 0" in out
    for op in bench.OPS:
        assert op.label in out, op.label
    # The multiply row has a time at level 1 and '-' at level 0 (impossible there).
    row = next(line for line in out.splitlines() if line.startswith("multiply (ct * ct"))
    assert row.split()[-1] == "-"
    # The table shows the JSON's medians.
    add1 = next(x for x in data["results"] if x["op"] == "add" and x["level"] == S1_LEVELS)
    assert bench.fmt_us(add1["median_us"]) in next(line for line in out.splitlines() if line.startswith("add "))


def test_progress_lines_on_stderr(quick_run):
    r, data, _ = quick_run
    total = len(data["results"])
    err = r.stderr
    # stderr is a pipe here, not a terminal: one plain line per measurement, no escape codes.
    assert "\r" not in err and "\x1b" not in err
    assert "S1: building the context and keys" in err
    assert f"[ 0/{total}  S1 encrypt level {S1_LEVELS}  elapsed" in err
    assert f"[{total - 1}/{total}  S1 rescale level 1  elapsed" in err
    assert "ETA" in err
    assert f"done: {total}/{total} measurements" in err
    # Nothing of the progress on stdout.
    assert "ETA" not in r.stdout


def test_progress_bar_on_a_terminal():
    stream = io.StringIO()
    p = bench.Progress(4, stream=stream, tty=True)
    for i in range(4):
        p.start(f"S1 add level {i}")
        p.advance()
    p.close()
    text = stream.getvalue()
    assert text.count("\r\x1b[K[") == 4  # redrawn in place, once per measurement
    assert "[------------------------] 0/4  S1 add level 0" in text
    assert "[##################------] 3/4  S1 add level 3" in text
    assert "ETA ?" in text and "elapsed" in text
    assert text.endswith("done: 4/4 measurements in 0.0 s\n")


def test_progress_disabled_prints_nothing(capsys):
    rc = cli.main(["bench", "--quick", "--presets", "S1", "--ops", "add", "--levels", "0", "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 0 and err == ""
    assert "add (ct + ct)" in out


def test_levels_and_ops_subset(tmp_path, capsys):
    path = tmp_path / "r.json"
    rc = cli.main(["bench", "--quick", "--presets", "s1", "--ops", "add,rescale", "--levels", "0",
                   "--json", str(path)])
    assert rc == 0, capsys.readouterr().err
    data = json.loads(path.read_text())
    # rescale is impossible at level 0: only add is timed.
    assert [(r["op"], r["level"]) for r in data["results"]] == [("add", 0)]
    assert data["settings"]["levels"] == [0]


# ---- the timed calls ---------------------------------------------------------------------------


def test_each_op_computes_what_it_is_named_after():
    ctx = oboro.Context.from_preset("S1")
    ctx.keygen(rotations=[1], conjugation=True)
    o = bench.Operands(ctx)
    x, y = o.x, o.y
    tol = 1e-4
    for level in range(S1_LEVELS, -1, -1):
        for op in bench.OPS:
            if level < op.min_level:
                continue
            with ctx.automatic() if op.auto else ctx.manual():
                out = op.prepare(o, level)()
            if op.key == "decrypt":
                assert np.max(np.abs(out - x)) < tol
                continue
            assert isinstance(out, oboro.Ciphertext), op.key
            want_level, want = {
                "encrypt": (level, x),
                "add": (level, x + y),
                "multiply": (level - 1, x * y),
                "mul_scalar": (level - 1, 0.75 * x),
                "rotate": (level, np.roll(x, -1)),
                "conjugate": (level, x),  # real data: the conjugate is the same vector
                "relinearize": (level, x * y),
                "rescale": (level - 1, x * y),
            }[op.key]
            assert out.level == want_level, (op.key, level, out.level)
            assert out.poly_count == 2, op.key
            assert np.max(np.abs(ctx.decrypt(out) - want)) < tol, (op.key, level)
    # The relinearize benchmark starts from a size-3 product at every level, level 0 included.
    for level in range(S1_LEVELS, -1, -1):
        assert o.product(level).poly_count == 3


def test_measure_counts_runs_and_honours_the_time_budget():
    calls = []
    t = bench.measure(lambda: calls.append(1), repeat=4, min_seconds=0)
    assert len(calls) == 5 and t.repeats == 4  # one warm-up call, not counted
    t = bench.measure(lambda: time.sleep(0.002), repeat=2, min_seconds=0.03)
    assert t.repeats >= 10 and t.median_us >= 2000 and t.min_us <= t.median_us <= t.max_us
    t = bench.measure(lambda: None, repeat=1, min_seconds=10, max_runs=50)
    assert t.repeats == 50  # the cap stops a fast op before the time budget


# ---- options and errors ------------------------------------------------------------------------


def test_plan_defaults_and_quick():
    plan = bench.make_plan()
    assert plan.presets == ["S1", "S2"] and plan.levels is None
    assert plan.repeat == bench.DEFAULT_REPEAT and plan.min_seconds == bench.DEFAULT_MIN_SECONDS
    assert plan.threads == oboro.num_threads() and not plan.warnings
    q = bench.make_plan(quick=True, repeat=7)
    assert q.repeat == 7 and q.min_seconds == bench.QUICK_MIN_SECONDS
    # S4 is only run when asked, and then with a warning.
    assert any("minutes" in w and "GB" in w for w in bench.make_plan(presets=["S4"]).warnings)
    # More threads than cores is allowed, with a warning.
    many = (os.cpu_count() or 1) + 1
    assert any("share cores" in w for w in bench.make_plan(threads=many).warnings)


def test_s4_warning_is_printed(capsys, monkeypatch):
    # Stop right after the checks: the warning must appear before any work on S4.
    def stop(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "run", stop)
    assert cli.main(["bench", "--presets", "S4"]) == 130
    assert "warning: preset S4 (N = 2^16, 20 levels) takes minutes and several GB" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--presets", "S9"], "unknown preset 'S9' (known presets: S1, S2, S3, S4, B1, B2, BT)"),
        (["--presets", "S1,S2", "--levels", "3"], "level 3 does not exist at preset S1, whose levels are 1 .. 0"),
        (["--presets", "S1", "--levels=-1"], "bad level -1"),
        (["--ops", "multiply,divide"], "unknown op 'divide'"),
        (["--presets", "S1", "--json", "/nonexistent-dir/x.json"], "does not exist"),
    ],
)
def test_bad_input_is_reported(argv, message, capsys):
    assert cli.main(["bench", *argv]) == 2
    out, err = capsys.readouterr()
    assert message in err and out == ""


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--threads", "0"], "bad thread count 0: it must be >= 1"),
        (["--threads", "two"], "bad thread count 'two'"),
        (["--levels", "top"], "bad level 'top'"),
        (["--repeat", "0"], "expected an integer >= 1"),
        (["--min-seconds", "-1"], "expected a number of seconds >= 0"),
    ],
)
def test_bad_values_are_rejected_by_the_parser(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", *argv])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_input_exit_status_of_the_command():
    r = subprocess.run([sys.executable, "-m", "oboro", "bench", "--presets", "S7"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "oboro bench: error: unknown preset 'S7'" in r.stderr


def test_missing_matplotlib(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    rc = cli.main(["bench", "--quick", "--presets", "S1", "--plot", str(tmp_path / "p")])
    out, err = capsys.readouterr()
    assert rc == 1
    assert "needs matplotlib" in err and "pip install 'oboro[plot]'" in err
    assert out == ""  # checked before the run, not after it
    # Without --plot, matplotlib is not needed.
    assert cli.main(["bench", "--quick", "--presets", "S1", "--ops", "add", "--levels", "0"]) == 0


def test_help_explains_every_option(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    for opt in ("--presets", "--ops", "--levels", "--threads", "--repeat", "--min-seconds", "--quick", "--json",
                "--plot", "--no-progress", "oboro[plot]"):
        assert opt in text, opt
    for op in bench.OPS:
        assert op.key in text and op.call in text


def test_other_subcommands_still_work(capsys):
    assert cli.main(["params", "S1"]) == 0
    assert "S1" in capsys.readouterr().out
    assert cli.main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == oboro.__version__
