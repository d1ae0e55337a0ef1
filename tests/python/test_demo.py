"""`oboro demo`: the end-to-end encrypted computation runs and its errors against NumPy are small."""

from __future__ import annotations

import subprocess
import sys

import pytest

import oboro
from oboro import demo

# Errors of the demo's results (mean, variance, 4x4 / 8x8 matrix-vector product of values in [-1, 1]):
# about 2^-27 .. 2^-30 at S2; the bound leaves several bits of margin.
MAX_ERROR = 1e-6


def test_run_reports_small_errors():
    lines: list[str] = []
    report = demo.run(preset="S2", size=256, dim=4, seed=7, out=lines.append)
    assert [r.name for r in report.results] == ["mean", "variance", "matrix-vector (4x4)"]
    for r in report.results:
        assert r.got is not None and r.got.shape == r.expected.shape
        assert r.max_abs_error < MAX_ERROR, (r.name, r.max_abs_error)
        assert r.bits > 20
    assert report.max_abs_error < MAX_ERROR
    for step in ("context", "key generation", "encryption (x)", "encryption (v)", "decryption", "total"):
        assert report.timings[step] >= 0
    text = "\n".join(lines)
    for word in ("N = 2^14", "128-bit", "key generation", "encryption", "mean", "variance", "matrix-vector",
                 "decryption", "max abs error"):
        assert word in text


def test_main_prints_steps_and_passes(capsys):
    rc = demo.main(["--size", "64", "--dim", "8", "--seed", "3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    for word in ("key generation", "encryption (x)", "mean", "variance", "matrix-vector (8x8)", "decryption",
                 " ms", "OK"):
        assert word in out
    # the summary line: "max abs error X <= tolerance 1e-05: OK"
    summary = [line for line in out.splitlines() if line.startswith("max abs error")][0]
    assert float(summary.split()[3]) < MAX_ERROR


def test_main_rejects_presets_without_enough_levels(capsys):
    assert demo.main(["--preset", "S1"]) == 2
    assert "needs 2" in capsys.readouterr().err


def test_run_validates_sizes():
    with pytest.raises(oboro.InvalidArgument, match="power of two"):
        demo.run(size=100, out=None)


def test_cli_demo():
    r = subprocess.run(
        [sys.executable, "-m", "oboro", "demo", "--size", "16", "--dim", "2", "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout and "matrix-vector (2x2)" in r.stdout
