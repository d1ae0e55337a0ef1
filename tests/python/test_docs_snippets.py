"""The Python code blocks of the docs run exactly as written: README.md with a fresh namespace per
block, docs/guide.md as one script (its blocks build on each other)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md"]
GUIDE = ROOT / "docs" / "guide.md"


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_python_snippets_run(path, capsys):
    blocks = python_blocks(path)
    assert blocks, f"{path.name} has no python code block"
    for code in blocks:
        exec(compile(code, f"{path.name}:python-block", "exec"), {"__name__": "__doc_snippet__"})
    out = capsys.readouterr().out
    # The README's quick start prints x*x + 2x rotated by one: [-0.9375, 8, 2.0625, 1.25].
    values = [float(v) for v in re.findall(r"-?\d+\.\d*", out)]
    assert len(values) >= 4
    for got, want in zip(values[:4], [-0.9375, 8.0, 2.0625, 1.25]):
        assert abs(got - want) < 1e-4


def test_guide_runs_as_one_script(capsys):
    blocks = python_blocks(GUIDE)
    assert len(blocks) >= 8, "docs/guide.md lost its code blocks"
    namespace = {"__name__": "__doc_snippet__"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"guide.md:python-block-{i + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "refused:" in out and "checksum" in out and "other keys" in out
