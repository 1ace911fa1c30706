#!/usr/bin/env bash
# Session 20, GPU call 6 (issue 13): where the warm re-tune's runner time goes. A cold
# tune of the default grid, then three warm re-tunes of copies of its cache: as is
# (8 workloads ahead), --prepare-ahead 1, and CUDA_MODULE_LOADING=EAGER.
set -uo pipefail
R=$PWD
D=$R/.devbuild/s20
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
mkdir -p /tmp/w; cd /tmp/w
t0=$(date +%s.%N)
$D/lntune tune --db cold.db --budget 230 --trace cold.trace > $O/cold.log 2>/dev/null
echo "cold: $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
warm() {  # NAME ENV... -- ARGS
  local name=$1; shift
  cp cold.db $name.db; [ -f cold.db-wal ] && cp cold.db-wal $name.db-wal
  local t=$(date +%s.%N)
  env "$@" $D/lntune tune --db $name.db --force --budget 110 --trace $name.trace ${ARGS:-} > $O/$name.log 2>/dev/null
  echo "$name: $(python3 -c "print(round($(date +%s.%N)-$t,1))") s; $(grep -E '^[0-9]+ keys:' $O/$name.log | cut -c1-60)"
  python3 $R/bench/tune_trace_stats.py $name.trace > $O/${name}_stats.txt 2>&1
  grep -E "^total|last key|^runner|host phases" $O/${name}_stats.txt
}
ARGS= warm w_default X=1
ARGS="--prepare-ahead 1" warm w_ahead1 X=1
ARGS= warm w_eager CUDA_MODULE_LOADING=EAGER
