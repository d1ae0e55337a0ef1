"""Where each library of `oboro compare` is, and how to start its worker (or why it is skipped).

oboro runs under this interpreter. The Python peers (openfhe, seal = tenseal.sealapi, desilofhe) run
under the first interpreter that can import them, tried in this order: --peer-python /
OBORO_PEER_PYTHON, the virtualenv that scripts/install_peers.sh makes (.peers/py310, CPython 3.10
because OpenFHE's only wheel that runs on Debian 12 is its cp310 one), this interpreter. Lattigo is
the Go program bench/peers/lattigo/lattigo-bench (--lattigo / OBORO_LATTIGO to point elsewhere).
A library that is not found is skipped with the reason, never an error.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "worker.py"
#: the repository root when oboro runs from a checkout (editable install); else the paths below do not exist
ROOT = HERE.parents[2]
PEER_VENV_PYTHON = ROOT / ".peers" / "py310" / "bin" / "python"
LATTIGO_DIR = ROOT / "bench" / "peers" / "lattigo"
LATTIGO_EXE = LATTIGO_DIR / "lattigo-bench"
INSTALL_HINT = "scripts/install_peers.sh installs it"

#: library -> the module its worker imports (Python libraries)
PYTHON_MODULES = {"oboro": "oboro", "openfhe": "openfhe", "seal": "tenseal.sealapi", "desilofhe": "desilofhe"}
LIBRARIES = ("oboro", "openfhe", "seal", "desilofhe", "lattigo")


@dataclass(frozen=True)
class Launch:
    """How to start one library's worker: argv (the task goes to stdin), or the reason it is skipped."""

    library: str
    argv: tuple[str, ...] = ()
    skipped: str | None = None


@functools.lru_cache(maxsize=None)
def _can_import(python: str, module: str) -> bool:
    try:
        r = subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def python_candidates(peer_python: str | None) -> list[str]:
    """Interpreters to try for the Python peers, in order, without repeats."""
    given = peer_python or os.environ.get("OBORO_PEER_PYTHON")
    out = [given] if given else []
    out += [str(PEER_VENV_PYTHON), sys.executable]
    return [p for p in dict.fromkeys(out) if Path(p).exists()]


def find(library: str, peer_python: str | None = None, lattigo: str | None = None) -> Launch:
    """The Launch of one library."""
    if library == "oboro":
        return Launch("oboro", (sys.executable, str(WORKER)))
    if library == "lattigo":
        exe = Path(lattigo or os.environ.get("OBORO_LATTIGO") or LATTIGO_EXE)
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            return Launch(library, skipped=f"Lattigo program {exe} not built (make -C bench/peers/lattigo; {INSTALL_HINT})")
        return Launch(library, (str(exe),))
    if library not in PYTHON_MODULES:
        raise ValueError(f"unknown library '{library}' (known: {', '.join(LIBRARIES)})")
    module = PYTHON_MODULES[library]
    tried = python_candidates(peer_python)
    for python in tried:
        if _can_import(python, module):
            return Launch(library, (python, str(WORKER)))
    return Launch(library, skipped=f"no interpreter can import {module} (tried: {', '.join(tried) or 'none'}; {INSTALL_HINT})")
