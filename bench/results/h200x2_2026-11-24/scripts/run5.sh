#!/usr/bin/env bash
# Session 25, GPU call 5 (issue 13) on nvidia-h100-x1: the final with 8 rounds of 8 repetitions and up to 6 finalists, and
# worker-process compilations. tuner_gpu_test and tuner_devices_gpu_test;
# tune_scale.sh steps 1-3 with the sample's traces.
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 60 $D/tuner_devices_gpu_test --gtest_brief=1 >> $O/tuner_gpu_test.log 2>&1; echo "tuner_devices_gpu_test rc=$?"
grep -hE "PASSED|FAILED|SKIPPED" $O/tuner_gpu_test.log | head
s "tune_scale steps 1-3"
OUT=/tmp/ts STEPS="1 2 3" COLD_S=200 WARM_S=60 TOTAL_S=360 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
cp /tmp/ts/compare.txt $O/compare.txt
gzip -c /tmp/ts/sample_pruned.trace > $O/sample_pruned.trace.gz; gzip -c /tmp/ts/sample_full.trace > $O/sample_full.trace.gz
grep -E "SLOWER|final " $O/compare.txt | head -20
tail -14 $O/tune_scale.log
grep -h "^search\|^compilations" /tmp/ts/cold.log /tmp/ts/warm.log /tmp/ts/sample_pruned.log /tmp/ts/sample_full.log
s done
