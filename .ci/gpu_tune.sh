#!/usr/bin/env bash
# Issue 4's check on a GPU machine: tune from an empty cache (cold), again
# with every CUBIN cached (warm), export a shippable cache, and launch from a
# fresh process through it with zero compilation.
#   bash .ci/gpu_tune.sh DIR     (DIR holds lntune)
set -uo pipefail
dir=${1:?usage: gpu_tune.sh DIR}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp}
db=$out/user.db
rm -f "$db" "$db"-wal "$db"-shm
lntune="$dir/lntune"
t0=$(date +%s.%N)
echo "=== tune, cold (empty cache)"
"$lntune" tune --db "$db" --budget "${COLD_BUDGET:-300}" ${TUNE_ARGS:-} >"$out/tune_cold.log" 2>&1
t1=$(date +%s.%N)
tail -n "${SUMMARY_LINES:-80}" "$out/tune_cold.log"
echo "cold wall: $(python3 -c "print(round($t1 - $t0, 1))") s"
echo "=== tune, warm (--force; CUBINs from the cache)"
"$lntune" tune --db "$db" --force --budget "${WARM_BUDGET:-90}" ${WARM_ARGS:-} >"$out/tune_warm.log" 2>&1
t2=$(date +%s.%N)
tail -n 12 "$out/tune_warm.log"
echo "warm wall: $(python3 -c "print(round($t2 - $t1, 1))") s"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "=== export for \"$gpu\""
"$lntune" export --db "$db" --gpu "$gpu" -o "$out/shipped.db" 2>&1 | tail -3
echo "=== a fresh process launching through the shipped cache"
LNTUNE_CACHE=/tmp/fresh-user.db LNTUNE_CACHE_PATH="$out/shipped.db" LNTUNE_LOG=debug \
  "$lntune" bench --n 1024,4096,12288 --dtype bf16 --kernel fwd,bwd 2>&1 | grep -vE "^\[lntune debug\] kernel .* from the cache$" | tail -25
echo "=== verify"
"$lntune" verify --db "$db" 2>&1 | tail -4
