"""Benchmark pages rendered by the bench/ report scripts are their committed JSON's rendering, not
typed by hand (the bootstrap pages are checked in test_bootstrap.py)."""
import importlib.util
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(script):
    spec = importlib.util.spec_from_file_location(script, ROOT / "bench" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_thread_scaling_page_is_the_rendering_of_its_json():
    report = _load("report_thread_scaling")
    bench = ROOT / "docs" / "benchmarks"
    runs = json.loads((bench / "thread_scaling.json").read_text())["runs"]
    assert sorted(r["threads"] for r in runs) == [1, 2, 4, 8, 16]
    assert report.render(runs) == (bench / "thread_scaling.md").read_text()
