"""Smoke run of bench/bench_serialization.py (the quick mode of the published benchmark): it writes
its JSON and Markdown, and its sizes are those of the objects (seeded about half of plain for the
fresh ciphertext, batch and matrix; a product has no seed)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_quick_run_writes_json_and_markdown(tmp_path):
    out_json, out_md = tmp_path / "s.json", tmp_path / "s.md"
    subprocess.run([sys.executable, str(ROOT / "bench" / "bench_serialization.py"), "--presets", "S1", "--repeat",
                    "1", "--min-seconds", "0", "--json", str(out_json), "--markdown", str(out_md)],
                   check=True, capture_output=True, text=True)
    rows = {r["object"]: r for r in json.loads(out_json.read_text())["results"][0]["rows"]}
    for name in ("ciphertext, fresh (secret key), top level", "Batch of 16 fresh ciphertexts, top level",
                 "EncryptedMatrix 16 x 16, 3-D layout, fresh"):
        assert rows[name]["seeded"] < 0.51 * rows[name]["plain"] < rows[name]["memory"], name
        assert rows[name]["serialize_us"] > 0 and rows[name]["deserialize_us"] > 0
    batch, single = rows["Batch of 16 fresh ciphertexts, top level"], rows["ciphertext, fresh (secret key), top level"]
    assert abs(batch["plain"] - 16 * single["plain"]) < 16 * 200  # the elements, without 16 headers and infos
    product = next(r for name, r in rows.items() if name.startswith("ciphertext after"))
    assert product["seeded"] == product["plain"]
    assert "Batch of 16" in out_md.read_text()
