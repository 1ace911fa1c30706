#!/usr/bin/env bash
# Runs the GPU suite on a machine with a GPU, sharded over processes.
#   bash .ci/gpu_check.sh DIR [gtest filter]
# DIR holds gpu_test (a build's tests/ folder, or a copy of the binaries).
set -uo pipefail
dir=${1:?usage: gpu_check.sh DIR [filter]}
filter=${2:-*}
shards=${SHARDS:-8}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
rc=0
pids=()
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$dir/gpu_test" --gtest_filter="$filter" --gtest_brief=1 >"${OUT:-/tmp}/shard$i.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { rc=1; echo "--- shard $i failed:"; tail -c 6000 "${OUT:-/tmp}/shard$i.log"; }
done
# Totals over the shards.
cat "${OUT:-/tmp}"/shard*.log | sed 's/\x1b\[[0-9;]*m//g' | awk '
  /tests? from .* ran/ { ran += $2 }
  /\[  PASSED  \] [0-9]+ test/ { passed += $4 }
  /\[  SKIPPED \] [0-9]+ test/ { skipped += $4 }
  /\[  FAILED  \] [0-9]+ test/ { failed += $4 }
  END { printf "gpu_test: %d ran, %d passed, %d failed, %d skipped\n", ran, passed, failed, skipped }'

exit $rc
