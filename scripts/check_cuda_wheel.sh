#!/usr/bin/env bash
# Builds the Python wheel with the CUDA backend (pip's `-C cmake.define.OBORO_CUDA=ON`, nvcc and
# the CUDA runtime from the PyPI wheels that `scripts/setup.sh --cuda` installs), installs it in a
# throwaway virtualenv and checks it: the build reports CUDA compiled and linked, and a batch on
# "cuda" either runs (a GPU is present: a round trip through the device) or fails with the clear
# "no CUDA GPU found" error. scripts/test.sh runs it; run it alone after scripts/setup.sh --cuda.
# The CMake build tree is build/python-cuda, or SKBUILD_BUILD_DIR when set: scripts/test.sh points
# it at its own tree (configured with OBORO_CUDA=ON and the module built), so that the wheel is
# packed from what the tests ran, without compiling anything again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VPY=.venv/bin/python
WHEELS="$(mktemp -d)"
VENV="$(mktemp -d)/venv"
trap 'rm -rf "$WHEELS" "$(dirname "$VENV")"' EXIT

"$VPY" -m pip wheel . --no-deps --no-build-isolation --disable-pip-version-check -q -w "$WHEELS" \
  -C cmake.define.OBORO_CUDA=ON -C build-dir="${SKBUILD_BUILD_DIR:-build/python-cuda}"
"$VPY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "numpy>=1.24" "$WHEELS"/oboro-*.whl
cd "$VENV"  # not the source tree: the installed package must be the one imported
"$VENV/bin/python" - <<'PY'
import numpy as np
import oboro

info = oboro.build_info()
print("CUDA wheel:", info)
assert info["cuda"] and info["cuda_runtime"], "the wheel was built without the CUDA backend"
ctx = oboro.Context.from_preset("S1")
ctx.keygen()
X = np.random.default_rng(0).uniform(-1, 1, (3, 8))
if info["cuda_devices"] > 0:
    batch = ctx.encrypt_batch(X, device="cuda")
    got = ctx.decrypt(batch + batch)[:, :8].real
    assert np.max(np.abs(got - 2 * X)) < 1e-6, "GPU batch round trip is wrong"
    print("CUDA wheel: a batch round trip on the GPU is correct")
else:
    try:
        ctx.encrypt_batch(X, device="cuda")
    except oboro.Error as e:
        assert "no CUDA GPU found" in str(e), e
        print("CUDA wheel: no GPU here; device='cuda' raises:", e)
    else:
        raise AssertionError("device='cuda' without a GPU did not raise")
PY
