#!/usr/bin/env bash
# Installs the other CKKS libraries that `oboro compare` measures beside oboro (all optional):
#   1. .peers/py310: a CPython 3.10 virtualenv with openfhe, tenseal (SEAL through tenseal.sealapi) and
#      desilofhe from PyPI. 3.10 because OpenFHE's only wheel that runs on Debian 12 (glibc 2.36) is
#      its cp310 one (docs/compare.md); the interpreter comes from pyenv (or OBORO_PY310).
#   2. bench/peers/lattigo/lattigo-bench: the Lattigo v6.1.1 program, built with `go build` (modules
#      from the Go module proxy, versions pinned by go.mod/go.sum).
# Each part is independent: a failure is reported and the script goes on with the next one.
# `oboro compare` finds .peers/py310 by itself (or --peer-python / OBORO_PEER_PYTHON).
#
# Usage: scripts/install_peers.sh [--no-python] [--no-go]
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DO_PY=1
DO_GO=1
for arg in "$@"; do
  case "$arg" in
    --no-python) DO_PY=0 ;;
    --no-go) DO_GO=0 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install_peers.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
RC=0

if ((DO_PY)); then
  echo "==== peers: Python 3.10 virtualenv .peers/py310 (openfhe, tenseal, desilofhe) ===="
  PY310="${OBORO_PY310:-}"
  if [ -z "$PY310" ]; then
    # pyenv's shim for python3.10 exists even when it refuses to run: try each candidate for real.
    for c in "$HOME"/.pyenv/versions/3.10*/bin/python3.10 python3.10; do
      if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 10)' >/dev/null 2>&1; then PY310="$c"; break; fi
    done
  fi
  if [ -z "$PY310" ]; then
    echo "skipped: no CPython 3.10 found (set OBORO_PY310=/path/to/python3.10)"; RC=1
  else
    [ -x .peers/py310/bin/python ] || "$PY310" -m venv .peers/py310
    # numpy < 2: the tenseal and openfhe wheels were built against NumPy 1.x.
    if .peers/py310/bin/python -m pip install -q "openfhe==1.6.1.0.22.4" "tenseal==0.3.16" "desilofhe==2.0.0" "numpy<2"; then
      .peers/py310/bin/python -c 'import openfhe, tenseal, desilofhe; print("peers: python ok")'
    else
      echo "peers: pip install failed (see above)"; RC=1
    fi
  fi
fi

if ((DO_GO)); then
  echo "==== peers: Lattigo v6.1.1 program (go build) ===="
  if ! command -v go >/dev/null 2>&1; then
    echo "skipped: no Go toolchain (apt-get install golang, or https://go.dev/dl)"; RC=1
  elif make -C bench/peers/lattigo; then
    echo "peers: built bench/peers/lattigo/lattigo-bench"
  else
    echo "peers: go build failed (see above)"; RC=1
  fi
fi
exit $RC
