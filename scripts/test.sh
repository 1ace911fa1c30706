#!/usr/bin/env bash
# Sets up, builds and runs every test. Tests labelled "gpu" run on a machine
# with an NVIDIA GPU and are reported as skipped, with the reason, elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
build=${BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" ${CTEST_ARGS:-}
# Say why GPU tests were skipped, if they were.
if ! "$build/tuner/lntune" info 2>/dev/null | grep -q '^gpu'; then
  echo "GPU tests (label gpu) were skipped: $("$build/tuner/lntune" info 2>&1 | grep -m1 '^no GPU' || echo 'no GPU')"
fi
