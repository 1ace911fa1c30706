#!/usr/bin/env bash
# Session 20, GPU call 7 (issue 13), a diagnostic build (.devbuild/diag/lntune: run 6's code
# plus LNTUNE_DIAG_SERIAL, a process-wide lock that keeps the background device work --
# allocations, uploads, frees -- out of every target's search; not committed). Does that
# background device work slow the warm re-tune's timings? Cold tune, then warm as is and
# warm with LNTUNE_DIAG_SERIAL=1, each on a copy of the cold cache.
set -uo pipefail
R=$PWD
D=$R/.devbuild/s20
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
mkdir -p /tmp/w; cd /tmp/w
t0=$(date +%s.%N)
$R/.devbuild/diag/lntune tune --db cold.db --budget 230 --trace cold.trace > $O/cold.log 2>/dev/null
echo "cold: $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
warm() {  # NAME ENV...
  local name=$1; shift
  cp cold.db $name.db; [ -f cold.db-wal ] && cp cold.db-wal $name.db-wal
  local t=$(date +%s.%N)
  env "$@" $R/.devbuild/diag/lntune tune --db $name.db --force --budget 110 --trace $name.trace > $O/$name.log 2>/dev/null
  echo "$name: $(python3 -c "print(round($(date +%s.%N)-$t,1))") s; $(grep -E '^[0-9]+ keys:' $O/$name.log | cut -c1-60)"
  python3 $R/bench/tune_trace_stats.py $name.trace > $O/${name}_stats.txt 2>&1
  grep -E "^total|last key|^runner|host phases" $O/${name}_stats.txt
}
warm w_default X=1
warm w_serial LNTUNE_DIAG_SERIAL=1
