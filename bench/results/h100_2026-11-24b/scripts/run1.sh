#!/usr/bin/env bash
# Session 20, GPU call 1 (issue 13): the tuner's GPU tests after the host-path changes
# (table-driven inputs, -O3 reference/compare, the compare shortcut, workloads freed
# in the background, five ahead when warm, narrower warm rivals), then tune_scale
# steps 1 (cold), 2 (warm, budget wide enough to finish the grid) and 3 (sample).
set -uo pipefail
D=$PWD/.devbuild/s20
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
s tests
LNTUNE_CACHE=off timeout 100 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 60 $D/tuner_devices_gpu_test --gtest_brief=1 > $O/tuner_devices_gpu_test.log 2>&1; echo "tuner_devices_gpu_test rc=$?"
s tune_scale
OUT=/tmp/ts STEPS="1 2 3" COLD_S=${COLD_S:-260} WARM_S=${WARM_S:-110} TOTAL_S=${TOTAL_S:-520} bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cp /tmp/ts/cold.log $O/cold.log; cp /tmp/ts/warm.log $O/warm.log
s done
tail -4 $O/tuner_gpu_test.log $O/tuner_devices_gpu_test.log | grep -E "PASSED|FAILED|SKIPPED"
grep -E "^total|last key|host phases" $O/cold_stats.txt $O/warm_stats.txt
tail -12 $O/tune_scale.log
