"""The examples run end to end (each is also documented in docs/guide.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_client_server_example(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/client_server/client.py"), "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no secret key" in out.stdout and "max error" in out.stdout
    # the server saw only public material; the files are what was exchanged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["context.oboro", "query.ct", "result.ct"]


def test_genome_search_example_runs_as_a_script():
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/genome_search/genome_search.py"), "--records", "1000", "--snps", "4",
         "--query-size", "3", "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| rotation |" in out.stdout and "the same as the plaintext search" in out.stdout
