#!/usr/bin/env bash
# Call 4 (session 33, H200). s33c = main after call 1 (df1aa88). Call 3's
# tuned cache did not come back (over the 16 MiB a file): the cold tune
# again (into /tmp), its records as JSON and the shippable export (winners'
# kernels) back, and the tables call 3 left: RMSNorm and the fused forms at
# x = 512 MiB, the tutorial grid end to end, small M and host time, each
# with the tuned cache (tuned, default heuristic and PyTorch in one process).
set -uo pipefail
B=$PWD/.devbuild
C=$B/s33c
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$C
db=/tmp/h200_s33.db; rm -f $db
s "cold tune of the default grid"
t0=$(date +%s); timeout 200 $C/lntune tune --db $db --budget 170 > /tmp/tune.log 2>&1
echo "tune rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "keys:|M-bucket|wall time|compilations" /tmp/tune.log
cp /tmp/tune.log $O/tune_call4.log
$C/lntune show --db $db --json | gzip -9 > $O/records_call4.json.gz; echo "show rc=$?"
$C/lntune export --db $db -o /tmp/h200_s33_export.db; echo "export rc=$?"; ls -la /tmp/h200_s33_export.db
gzip -9 -c /tmp/h200_s33_export.db > $O/h200_s33_export.db.gz; ls -la $O/h200_s33_export.db.gz
s "tables with the tuned cache"
mkdir -p /tmp/tab
STEP_SECONDS=120 TABLES="ext norms grid" CACHE=$db OUT=/tmp/tab bash bench/gpu_tables.sh $C call4
for f in norms_call4.log norms_call4.md grid_call4.log grid_call4.md; do cp /tmp/tab/$f $O/ 2>/dev/null; done
grep -E "geomean|x[0-9.]+" /tmp/tab/grid_call4.log | tail -5
s done
