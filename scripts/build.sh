#!/usr/bin/env bash
# Configures and builds lntune. BUILD_DIR (default build), LNTUNE_SANITIZE=1
# for an ASan+UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD_DIR:-build}
san=OFF werror=ON
# Sanitizer builds: GCC's -O2 flow analysis gives false maybe-uninitialized
# warnings under -fsanitize, so warnings stay warnings there.
[ "${LNTUNE_SANITIZE:-0}" = 1 ] && san=ON werror=OFF
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLNTUNE_SANITIZE=$san -DLNTUNE_WERROR=$werror >/dev/null
cmake --build "$build"
