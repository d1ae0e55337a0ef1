"""The Python package builds, imports and links the C++ core."""

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

try:
    import tomllib  # Python >= 3.11
except ImportError:  # pragma: no cover
    tomllib = None

import pytest

import oboro
from oboro import _core

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_written_once():
    """CMakeLists.txt's project(VERSION) is the version: the package metadata (pyproject.toml reads
    it with scikit-build-core's regex provider) and the module's __version__ (a compile definition
    from the same CMake variable) agree with it."""
    cmake = (ROOT / "CMakeLists.txt").read_text()
    version = re.search(r"project\(oboro\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", cmake).group(1)
    assert oboro.__version__ == version
    assert _core.__version__ == version
    assert importlib.metadata.version("oboro") == version
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text()) if tomllib else None
    if pyproject is not None:
        assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]


def test_build_info_fields():
    info = oboro.build_info()
    assert isinstance(info, dict)
    assert info["version"] == oboro.__version__
    assert isinstance(info["compiler"], str) and info["compiler"]
    assert info["word_size"] == 64
    assert info["cpu_ntt"] in ("avx512+ifma", "avx512", "avx2", "scalar")
    assert info["cpu_kernels"] in ("avx512+ifma", "avx512", "avx2", "scalar")
    assert isinstance(info["cuda"], bool)
    assert isinstance(info["cuda_runtime"], bool)
    assert isinstance(info["cuda_devices"], int) and info["cuda_devices"] >= 0
    if not info["cuda"]:
        assert info["cuda_runtime"] is False
        assert info["cuda_devices"] == 0


@pytest.mark.parametrize("log_n,bits", [(1, 20), (4, 30), (10, 40), (12, 50), (13, 60), (14, 62)])
def test_selftest_ntt(log_n, bits):
    assert _core._selftest_ntt(log_n, bits) is True


@pytest.mark.parametrize("log_n,bits", [(0, 40), (18, 40), (10, 10), (10, 63)])
def test_selftest_ntt_rejects_bad_arguments(log_n, bits):
    with pytest.raises(ValueError):
        _core._selftest_ntt(log_n, bits)


def _run_cli(*args):
    return subprocess.run([sys.executable, "-m", "oboro", *args], capture_output=True, text=True, timeout=120)


def test_cli_info():
    r = _run_cli("info")
    assert r.returncode == 0, r.stderr
    assert "word_size" in r.stdout and "compiler" in r.stdout


def test_cli_info_json():
    import json

    r = _run_cli("info", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["word_size"] == 64


def test_cli_demo_is_registered():
    from oboro import cli

    assert "demo" in cli.build_parser().format_help()


def test_cli_without_command_prints_help():
    r = _run_cli()
    assert r.returncode == 2
    assert "info" in r.stdout
