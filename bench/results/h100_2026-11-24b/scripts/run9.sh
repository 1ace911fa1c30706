#!/usr/bin/env bash
# Session 20, GPU call 9 (issue 13), a diagnostic build (.devbuild/diag/lntune, not committed:
# the committed code plus LNTUNE_DIAG_SERIAL=worker,<what>, a process-wide lock held by the
# benchmarking thread through each target's search and by the background threads around one
# kind of device work: free (finished workloads), alloc (cuMemAlloc of new workloads), upload
# (their cuMemcpyHtoD)). Which kind slows the timings down? Cold tune, then four warm re-tunes.
set -uo pipefail
R=$PWD
D=$R/.devbuild/s20
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
mkdir -p /tmp/w; cd /tmp/w
t0=$(date +%s.%N)
$R/.devbuild/diag/lntune tune --db cold.db --budget 230 > $O/cold.log 2>/dev/null
echo "cold: $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
warm() {  # NAME ENV...
  local name=$1; shift
  cp cold.db $name.db; [ -f cold.db-wal ] && cp cold.db-wal $name.db-wal
  local t=$(date +%s.%N)
  env "$@" $R/.devbuild/diag/lntune tune --db $name.db --force --budget 100 --trace $name.trace > $O/$name.log 2>/dev/null
  echo "$name: $(python3 -c "print(round($(date +%s.%N)-$t,1))") s; $(grep -E '^[0-9]+ keys:' $O/$name.log | cut -c1-60)"
  python3 $R/bench/tune_trace_stats.py $name.trace > $O/${name}_stats.txt 2>&1
  grep -E "^total|^runner" $O/${name}_stats.txt
}
warm w_free LNTUNE_DIAG_SERIAL=worker,free
warm w_alloc LNTUNE_DIAG_SERIAL=worker,alloc
warm w_upload LNTUNE_DIAG_SERIAL=worker,upload
