#!/usr/bin/env bash
# Session 21, GPU call 1 (issue 13): the device-buffer pool (workloads'
# buffers reused between keys). The tuner's GPU tests, then tune_scale steps
# 1 (cold), 2 (warm) and 3 (pruned vs exhaustive).
set -uo pipefail
D=$PWD/.devbuild/s21
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 120 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 60 $D/tuner_devices_gpu_test --gtest_brief=1 > $O/tuner_devices_gpu_test.log 2>&1; echo "tuner_devices_gpu_test rc=$?"
s tune_scale
OUT=/tmp/ts STEPS="${STEPS:-1 2 3}" COLD_S=${COLD_S:-220} WARM_S=${WARM_S:-100} TOTAL_S=${TOTAL_S:-470} bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cp /tmp/ts/cold.log $O/cold.log; cp /tmp/ts/warm.log $O/warm.log
s done
grep -hE "PASSED|FAILED|SKIPPED|Failure" $O/tuner_gpu_test.log $O/tuner_devices_gpu_test.log | head -20
grep -h "device buffers" $O/cold.log $O/warm.log
grep -E "^total|last key|host phases|^runner" $O/cold_stats.txt $O/warm_stats.txt
tail -14 $O/tune_scale.log
