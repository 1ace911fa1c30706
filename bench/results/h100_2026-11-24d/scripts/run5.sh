#!/usr/bin/env bash
# Session 22, GPU call 5 (issue 13): after the fill-table fix, the whole
# tuner_gpu_test and tuner_devices_gpu_test (one GPU); then cold, warm and the
# pruned-vs-exhaustive sample of tune_scale.sh with trace statistics.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tuner_gpu_test
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
grep -hE "PASSED|FAILED|SKIPPED|Failure|tests? ran|\[ (GPU|hand)" $O/tuner_gpu_test.log | head -30
LNTUNE_CACHE=off timeout 60 $D/tuner_devices_gpu_test --gtest_brief=1 2>&1 | grep -E "PASSED|FAILED|SKIPPED" | head -4
s tune_scale
OUT=/tmp/ts STEPS="1 2 3" COLD_S=200 WARM_S=100 TOTAL_S=440 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cp /tmp/ts/compare.txt $O/compare.txt 2>/dev/null
grep -h "failed —" /tmp/ts/cold.err /tmp/ts/warm.err | head -5
s done
grep -E "^total|last key|before the first|host phases|^runner" $O/cold_stats.txt $O/warm_stats.txt
grep -E "SLOWER|within" $O/compare.txt | head -8
tail -14 $O/tune_scale.log
