#!/usr/bin/env bash
# Call 5 (session 33, H200). s33g = s33c + the default grid's bandwidth
# bucket with the RMSNorm variants too (call 4: served from the training
# bucket's records, RMSNorm bf16 fell to 52.5-82% of copy where the default
# heuristic had 99%). The cold tune of the new default grid (its time), then
# the RMSNorm / fused table with that cache, and the LayerNorm bandwidth
# table again (tuned, default heuristic and PyTorch in one process).
set -uo pipefail
B=$PWD/.devbuild
G=$B/s33g
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$G
db=/tmp/h200_s33g.db; rm -f $db
s "cold tune of the default grid"
t0=$(date +%s); timeout 240 $G/lntune tune --db $db --budget 220 > /tmp/tune.log 2>&1
echo "tune rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "keys:|M-bucket|wall time|compilations|search:" /tmp/tune.log
grep -E "rms.*M-bucket (5|3|2) " /tmp/tune.log | head -60 > $O/tune_rms_bandwidth_call5.log
cp /tmp/tune.log $O/tune_call5.log
$G/lntune show --db $db --json | gzip -9 > $O/records_call5.json.gz
s "tables with the tuned cache"
mkdir -p /tmp/tab
STEP_SECONDS=120 TABLES="ext norms bandwidth" CACHE=$db OUT=/tmp/tab bash bench/gpu_tables.sh $G call5
for f in norms_call5.log norms_call5.md bandwidth_call5.md; do cp /tmp/tab/$f $O/ 2>/dev/null; done
grep -E "RMSNorm \| bf16 \| - " /tmp/tab/norms_call5.md | head -20
s done
