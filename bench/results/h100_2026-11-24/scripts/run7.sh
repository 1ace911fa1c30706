#!/usr/bin/env bash
# Session 19, GPU call 7 (issue 13, final): tuner GPU tests; cold, warm and the sample
# (pruned vs exhaustive) at the final commit, all in one process sequence.
set -uo pipefail
D=$PWD/.devbuild/s19
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
LNTUNE_CACHE=off timeout 100 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 100 $D/tuner_devices_gpu_test --gtest_brief=1 > $O/tuner_devices_gpu_test.log 2>&1; echo "tuner_devices_gpu_test rc=$?"
OUT=/tmp/ts STEPS="1 2 3" COLD_S=${COLD_S:-260} WARM_S=${WARM_S:-60} TOTAL_S=${TOTAL_S:-540} bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cat $O/warm_stats.txt >> $O/cold_stats.txt
gzip -c /tmp/ts/cold.trace > $O/cold.trace.gz
cp /tmp/ts/compare.txt $O/
grep -E "^total|host phases|last key" $O/cold_stats.txt
tail -16 $O/tune_scale.log
