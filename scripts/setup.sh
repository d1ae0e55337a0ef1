#!/usr/bin/env bash
# Installs what oboro needs on a fresh Debian 12 machine, idempotently:
#   1. Debian packages (only those missing): cmake ninja-build g++ libgtest-dev python3-venv
#      (+ python3 / python3-dev when the Python or its headers are missing)
#      (--clang: also clang and libclang-rt-14-dev, Debian's Clang 14 and its sanitizer runtimes)
#   2. a virtualenv at .venv with numpy, pytest, scikit-build-core, nanobind (and Ray, for oboro.distributed)
#      (--cuda: also the CUDA 13 compiler/runtime wheels nvidia-cuda-nvcc, -runtime, -cccl)
#   3. oboro itself, editable, with its `plot` extra (matplotlib, for `oboro bench --plot`): pip install
#      --no-build-isolation -e ".[plot]". Python files are used from python/oboro directly; the C++
#      module is rebuilt incrementally in build/python/<tag> each run: re-run after changing C++ code.
#      scikit-build-core's SKBUILD_* environment variables (build dir, CMake defines) are honoured:
#      scripts/test.sh points them at its own build tree, which has built the module already.
#
# Usage: scripts/setup.sh [--cuda] [--clang] [--no-package | --package-only]
#   --no-package    steps 1 and 2 only (scripts/test.sh builds the module with the C++ tests first)
#   --package-only  step 3 only (the virtualenv exists)
# Environment: OBORO_PYTHON (interpreter for the venv, default python3),
#              CMAKE_BUILD_PARALLEL_LEVEL (default: number of cores).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

WITH_CUDA=0
WITH_CLANG=0
STEPS=all
for arg in "$@"; do
  case "$arg" in
    --cuda) WITH_CUDA=1 ;;
    --clang) WITH_CLANG=1 ;;
    --no-package) STEPS=environment ;;
    --package-only) STEPS=package ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

section() { printf '\n==== setup: %s ====\n' "$*"; }
PYTHON="${OBORO_PYTHON:-python3}"
VENV="$ROOT/.venv"
VPY="$VENV/bin/python"
T0=$SECONDS

if [ "$STEPS" != package ]; then
# ---- 1. Debian packages ------------------------------------------------------------------------
section "system packages"
if command -v dpkg >/dev/null 2>&1; then
  missing=()
  wanted=(cmake ninja-build g++ libgtest-dev python3-venv)
  # Clang 14 (Debian 12's) for scripts/test.sh's Clang build; libclang-rt-14-dev has the runtimes
  # of -fsanitize=address,undefined, which the clang package only recommends.
  if ((WITH_CLANG)); then wanted+=(clang libclang-rt-14-dev); fi
  for pkg in "${wanted[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    missing+=(python3 python3-dev)
  elif ! "$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
    dpkg -s python3-dev >/dev/null 2>&1 || missing+=(python3-dev)  # headers for the extension module
  fi
  if ((${#missing[@]})); then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    echo "installing: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "all present"
  fi
else
  echo "no dpkg (not Debian?): make sure cmake >= 3.22, ninja, a C++20 compiler, GoogleTest and Python >= 3.10 are installed"
  if ((WITH_CLANG)); then echo "(--clang: and clang++ with its AddressSanitizer and UBSan runtimes)"; fi
fi

# ---- 2. virtualenv and Python packages -------------------------------------------------------------
section "virtualenv .venv"
if [ -x "$VPY" ] && ! "$VPY" -c 'import sys' >/dev/null 2>&1; then
  echo ".venv is broken (its Python moved?): recreating it"
  rm -rf "$VENV"
fi
if [ ! -x "$VPY" ]; then
  "$PYTHON" -m venv "$VENV"
  echo "created $VENV ($("$VPY" --version))"
else
  echo "using $VENV ($("$VPY" --version))"
fi

PIP=("$VPY" -m pip --disable-pip-version-check)
# scikit-learn: the data sets (shipped inside the package) and plaintext models of examples/ml/
packages=("numpy>=1.24" "pytest>=7" "xxhash>=3" "scikit-build-core>=0.10" "nanobind>=2.0,<4" "scikit-learn>=1.3")
if ((WITH_CUDA)); then
  # CUDA 13 wheels: nvcc, cudart and headers under site-packages/nvidia/cu13/{bin,include,lib}.
  # (Not the *-cu12 wheels: they ship no nvcc binary.)
  packages+=("nvidia-cuda-nvcc>=13,<14" "nvidia-cuda-runtime>=13,<14" "nvidia-cuda-cccl>=13,<14")
fi
"${PIP[@]}" install -q "${packages[@]}"
echo "python packages: ok (${packages[*]})"
# Ray: oboro.distributed and its tests (tests/python/test_distributed.py). Installed on its own so that
# a Python that Ray has no wheel for yet leaves the rest of the setup working (those tests then skip).
if "${PIP[@]}" install -q "ray>=2.10"; then
  echo "ray: ok ($("$VPY" -c 'import ray; print(ray.__version__)'))"
else
  echo "ray: not installable on this Python; the oboro.distributed tests will be skipped" >&2
fi

fi  # steps 1 and 2

if [ "$STEPS" = environment ]; then
  echo "setup done in $((SECONDS - T0)) s (the oboro package is not installed: --no-package)"
  exit 0
fi
if [ ! -x "$VPY" ]; then
  echo "setup.sh --package-only: no virtualenv at $VENV (run scripts/setup.sh first)" >&2
  exit 1
fi
PIP=("$VPY" -m pip --disable-pip-version-check)

# ---- 3. the oboro package (editable) ------------------------------------------------------------
section "oboro Python package (pip install -e .[plot])"
# A build directory configured from another checkout (copied or moved tree) cannot be reused.
for cache in build/python/*/CMakeCache.txt; do
  [ -f "$cache" ] || continue
  home="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")"
  if [ "$home" != "$ROOT" ]; then
    echo "removing $(dirname "$cache") (configured for $home)"
    rm -rf "$(dirname "$cache")"
  fi
done
if [ -n "${SKBUILD_BUILD_DIR:-}" ]; then
  echo "CMake build tree: $SKBUILD_BUILD_DIR (SKBUILD_BUILD_DIR), defines: ${SKBUILD_CMAKE_DEFINE:-none} (SKBUILD_CMAKE_DEFINE)"
fi
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
"${PIP[@]}" install -q --no-build-isolation -e ".[plot]"
"$VPY" -c 'import oboro; print("oboro", oboro.__version__, "installed:", oboro.build_info())'

echo "setup done in $((SECONDS - T0)) s"
