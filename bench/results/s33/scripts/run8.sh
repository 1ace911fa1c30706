#!/usr/bin/env bash
# Call 8 (session 33, H200): the LayerNorm bandwidth table of the final
# launcher (s33n: the bandwidth regime takes only its own near records)
# with a cold-tuned LayerNorm cache (`lntune tune --op layernorm`: the
# default grid's LayerNorm keys, both buckets): tuned, default heuristic and
# PyTorch in one process.
set -uo pipefail
G=$PWD/.devbuild/s33n
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$G
db=/tmp/h200_ln.db; rm -f $db
t0=$(date +%s); timeout 100 $G/lntune tune --db $db --op layernorm --budget 85 > $O/tune_ln_call8.log 2>&1
echo "tune rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "keys:|wall time" $O/tune_ln_call8.log
mkdir -p /tmp/tab
STEP_SECONDS=100 TABLES="ext bandwidth" CACHE=$db OUT=/tmp/tab bash bench/gpu_tables.sh $G call8
cp /tmp/tab/bandwidth_call8.md /tmp/tab/bandwidth_call8.log $O/ 2>/dev/null
grep -E "regime, (for|back)ward" /tmp/tab/bandwidth_call8.md
