#!/usr/bin/env bash
# Session 27, GPU call 2: the tuner's new L2 flush (a read of twice the L2,
# tuner/l2_flush.hpp) against the old one (cuMemsetD32Async over twice the
# L2): lntune_sweep train at M = 4096, both flushes, bf16 and fp32; the
# backward at M = 1 and 32 over the whole space (is the default the best
# there?); then the cold tune of the default grid with the new flush (the
# M = 4096 table).
set -uo pipefail
D=$PWD/.devbuild/s27
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
for dt in bf16 fp32; do
  for fl in memset read; do
    s "train $dt, $fl flush"
    env LNTUNE_SWEEP_FLUSH=$fl timeout 150 $D/lntune_sweep train $dt 1024 2048 4096 8192 16384 > $O/train_${dt}_${fl}.log 2>&1
    grep -E "^train" $O/train_${dt}_${fl}.log
  done
done
for m in 1 32; do
  s "small M = $m, whole space"
  env LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_EVERY=1 timeout 150 $D/lntune_sweep train bf16 1024 4096 8192 > $O/small_m${m}.log 2>&1
  grep -E "^train" $O/small_m${m}.log
done
s "tune (default grid, cold, new flush)"
/usr/bin/time -f "wall %e s" timeout 300 $D/lntune tune --db /tmp/t.db > $O/tune.log 2> $O/tune.err; echo "rc=$?"; tail -3 $O/tune.err; tail -3 $O/tune.log
gzip -f $O/tune.log
s done
