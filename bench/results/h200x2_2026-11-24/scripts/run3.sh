#!/usr/bin/env bash
# Session 25, GPU call 3 (issue 13) on nvidia-h100-x1: compilations in worker
# processes (the default now). tuner_gpu_test and tuner_devices_gpu_test;
# tune_scale.sh steps 1-3 (cold, warm, pruned vs exhaustive); then the cold
# tune again with --in-process-compile, for the comparison.
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 60 $D/tuner_devices_gpu_test --gtest_brief=1 >> $O/tuner_gpu_test.log 2>&1; echo "tuner_devices_gpu_test rc=$?"
grep -hE "PASSED|FAILED|SKIPPED" $O/tuner_gpu_test.log | head
s "tune_scale steps 1-3, worker processes"
OUT=/tmp/ts STEPS="1 2 3" COLD_S=200 WARM_S=60 TOTAL_S=330 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
cp /tmp/ts/compare.txt $O/compare.txt; cp /tmp/ts/cold.log $O/cold.log
tail -16 $O/tune_scale.log
grep -h "^compilations" /tmp/ts/cold.log /tmp/ts/warm.log
s "cold, in-process compile"
rm -f /tmp/ip.db*
t0=$(date +%s.%N)
$D/lntune tune --db /tmp/ip.db --in-process-compile --budget 200 > $O/cold_inprocess.log 2>&1
t1=$(date +%s.%N)
echo "wall $(python3 -c "print(f'{$t1-$t0:.1f}')") s"
grep -E "^compilations|^843 keys|^wall" $O/cold_inprocess.log
s done
