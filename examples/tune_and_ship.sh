#!/usr/bin/env bash
# "Tune once, ship the cache, call the launcher", end to end, on a GPU machine:
#   bash examples/tune_and_ship.sh [BUILD_DIR] [WORK_DIR]     (defaults: build, BUILD_DIR/ship-example)
# 1. tunes bf16 forward and backward for N=4096, M=4096 into a scratch cache
#    (lntune tune; a few minutes at most: --budget 300);
# 2. exports this GPU's records and the winners' kernels as shipped.db;
# 3. installs lntune into a prefix and builds examples/cpp_consumer against it
#    (find_package(lntune));
# 4. runs the consumer with only shipped.db on the search path (read-only; the
#    user cache is an empty scratch path) and checks that both calls used the
#    tuned configs ("tuned (exact)"), loaded the shipped kernels instead of
#    compiling them, and left shipped.db untouched.
# Exit 0 when all holds; 77 without a GPU (nothing to tune); 1 otherwise.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
work=${2:-$build/ship-example}
lntune=$build/tuner/lntune
export PATH=/usr/local/cuda/bin:$PATH

if ! "$lntune" info | grep -q '^gpu 0: '; then
  echo "SKIPPED: tuning needs a GPU: $("$lntune" info 2>&1 | grep -m1 '^no GPU' || echo 'none found')"
  exit 77
fi
gpu=$("$lntune" info | sed -n 's/^gpu 0: \(.*\) (sm_[0-9a-z]*, [0-9]* SMs.*/\1/p')
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "== 1. tune on $gpu"
"$lntune" tune --db "$work/tuned.db" --n 4096 --m 4096 --dtype bf16 --kernel fwd,bwd --budget 300

echo "== 2. export the cache to ship"
"$lntune" export --db "$work/tuned.db" --gpu "$gpu" -o "$work/shipped.db"
"$lntune" show --db "$work/shipped.db"
before=$(sha256sum "$work/shipped.db" | cut -d' ' -f1)

echo "== 3. install lntune and build the consumer against it"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/cpp_consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null

echo "== 4. run it against the shipped cache only"
set +e
LNTUNE_CACHE="$work/no-user-cache.db" LNTUNE_CACHE_PATH="$work/shipped.db" LNTUNE_LOG=debug \
  "$work/consumer/cpp_consumer" 4096 4096 >"$work/run.out" 2>"$work/run.log"
code=$?
set -e
cat "$work/run.out"
fail() { echo "FAIL: $*"; echo "--- log:"; cat "$work/run.log"; exit 1; }
[ "$code" = 0 ] || fail "the consumer exited $code"
grep -q '^forward: .*: tuned (exact)$' "$work/run.out" || fail "the forward did not use the shipped config"
grep -q '^backward: .*: tuned (exact)$' "$work/run.out" || fail "the backward did not use the shipped config"
grep -q 'with NVRTC' "$work/run.log" && fail "kernels were compiled instead of loaded from shipped.db: $(grep 'with NVRTC' "$work/run.log")"
grep -q 'from the cache' "$work/run.log" || fail "no kernel came from the cache"
[ "$(sha256sum "$work/shipped.db" | cut -d' ' -f1)" = "$before" ] || fail "shipped.db was modified"
echo "ok: the consumer ran the tuned kernels from the shipped cache, without NVRTC; shipped.db unchanged"
