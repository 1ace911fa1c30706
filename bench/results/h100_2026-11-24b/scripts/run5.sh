#!/usr/bin/env bash
# Session 20, GPU call 5 (issue 13): background threads at nice 15 and 19;
# the tuner's GPU tests, then tune_scale steps 1 (cold) and 2 (warm, wide budget).
set -uo pipefail
D=$PWD/.devbuild/s20
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 120 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 60 $D/tuner_devices_gpu_test --gtest_brief=1 > $O/tuner_devices_gpu_test.log 2>&1; echo "tuner_devices_gpu_test rc=$?"
s tune_scale
OUT=/tmp/ts STEPS="1 2" COLD_S=${COLD_S:-240} WARM_S=${WARM_S:-120} TOTAL_S=${TOTAL_S:-420} bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cp /tmp/ts/cold.log $O/cold.log; cp /tmp/ts/warm.log $O/warm.log
s done
grep -hE "PASSED|FAILED|SKIPPED|Failure" $O/tuner_gpu_test.log $O/tuner_devices_gpu_test.log | head -20
grep -E "^total|last key|host phases|^runner" $O/cold_stats.txt $O/warm_stats.txt
grep -A6 "fit of" $O/warm_stats.txt
tail -9 $O/tune_scale.log
