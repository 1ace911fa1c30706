#!/usr/bin/env bash
# Sets up, builds and runs lntune's main job: `lntune tune` over the default
# grid on this machine's GPU, into the user cache (see README). Without a GPU
# it says so and shows what it would compile instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
lntune=${BUILD_DIR:-build}/tuner/lntune
if "$lntune" info >/dev/null 2>&1 && "$lntune" info | grep -q "^gpu"; then
  exec "$lntune" tune "$@"
fi
echo "lntune: no usable GPU here ($("$lntune" info 2>&1 | grep -m1 -i 'gpu' || echo 'see lntune info')); tuning needs one."
echo "Showing the default forward kernel for bf16, N=4096 instead:"
"$lntune" gen --kernel fwd --dtype bf16 --n 4096
