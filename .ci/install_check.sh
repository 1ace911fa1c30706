#!/usr/bin/env bash
# CI (no GPU): installs lntune from the build (./build, from scripts/test.sh)
# into a prefix, builds the example consumers against it (find_package(lntune)
# and pkg-config), and runs them: without a GPU they must exit 77 saying so
# (the C++ one with lntune's own message). tests/install_consumers.sh does it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pkg-config >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config >/dev/null
fi
build=${BUILD_DIR:-build}
bash tests/install_consumers.sh "$build" "$build/install-check"
