#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the end-to-end demo: `oboro demo [ARGS...]`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
exec "$ROOT/.venv/bin/oboro" demo "$@"
