#!/usr/bin/env bash
# Session 19, GPU call 4 (issue 13): after 3.5x faster inputs, prepare at nice 5.
# workload and the related-key priors, then tune_scale steps 1 (cold) and 2 (warm).
set -uo pipefail
D=$PWD/.devbuild/s19
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
s tests
LNTUNE_CACHE=off timeout 150 $D/tuner_devices_gpu_test --gtest_brief=1 > $O/tuner_devices_gpu_test.log 2>&1; echo "tuner_devices_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
tail -n 3 $O/tuner_devices_gpu_test.log $O/tuner_gpu_test.log
s tune_scale
OUT=/tmp/ts STEPS="1 2" COLD_S=${COLD_S:-280} WARM_S=${WARM_S:-60} TOTAL_S=${TOTAL_S:-380} bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cp /tmp/ts/cold.log $O/cold.log; cp /tmp/ts/warm.log $O/warm.log
gzip -c /tmp/ts/cold.trace > $O/cold.trace.gz; gzip -c /tmp/ts/warm.trace > $O/warm.trace.gz
grep -E "^total|host phases|last key" $O/cold_stats.txt $O/warm_stats.txt
tail -25 $O/tune_scale.log
