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


def test_distributed_genome_search_example():
    """examples/distributed/: the genome search sharded over a local Ray cluster (needs the ray extra)."""
    import pytest

    pytest.importorskip("ray", reason="Ray is not installed (pip install 'oboro[ray]')")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/distributed/genome_search_ray.py"), "--records", "17000", "--snps", "4",
         "--query-size", "3", "--shards", "2", "--compare"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 shards (16,384, 616 records)" in out.stdout and "replies bit-identical" in out.stdout
    assert "the same as the plaintext search" in out.stdout


def _run_ml_example(name: str, tmp_path) -> dict:
    import json

    out_json = tmp_path / f"{name}.json"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/ml" / f"{name}.py"), "--samples", "12", "--json", str(out_json)],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "accuracy: plaintext" in out.stdout and "time per sample" in out.stdout
    return json.loads(out_json.read_text())


def test_logistic_regression_example(tmp_path):
    r = _run_ml_example("logistic_regression", tmp_path)
    assert r["samples"] == 12 and r["agreement"] == 1.0
    assert r["max_score_error"] < 0.05  # probabilities: the degree-63 interpolant on [-B, B]
    assert r["levels"].startswith("7 levels")


def test_neural_network_example(tmp_path):
    r = _run_ml_example("neural_network", tmp_path)
    assert r["samples"] == 12 and r["agreement"] == 1.0
    assert r["max_score_error"] < 1e-2
    assert r["levels"].startswith("7 levels")


def test_logistic_training_example_with_bootstrapping(tmp_path):
    """examples/ml/logistic_training.py on its insecure test ring: gradient descent on ciphertexts with
    a bootstrap per iteration reaches the plaintext training's accuracy, and its weights differ from
    plaintext training with the same polynomial by the encryption's error only."""
    import json

    out_json = tmp_path / "training.json"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/ml/logistic_training.py"), "--ring", "test", "--iterations", "3",
         "--json", str(out_json)],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    r = json.loads(out_json.read_text())
    assert r["training_samples"] == 64 and r["iterations"] == 3
    assert r["accuracy_encrypted"] >= r["accuracy_plaintext"] - 0.02
    assert r["max_weight_difference_same_polynomial"] < 1e-5
    assert r["seconds"]["bootstrap"] > 0 and "time per iteration" in out.stdout
