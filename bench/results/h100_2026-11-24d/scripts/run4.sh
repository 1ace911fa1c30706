#!/usr/bin/env bash
# Session 22, GPU call 4 (issue 13): the GPU-built workloads (inputs drawn on
# the GPU, the float64 reference on the GPU, the CPU oracle on sampled rows):
# their GPU tests and the rest of tuner_gpu_test; then the cold and warm
# tunes of the default grid with trace statistics. Also issue 10's
# wide-backward test and the fp32 N = 262144 default.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tuner_gpu_test
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
grep -hE "PASSED|FAILED|SKIPPED|Failure|tests? ran" $O/tuner_gpu_test.log | head -30
s wide
LNTUNE_CACHE=off timeout 100 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' 2>&1 | tail -2
LNTUNE_CACHE=off LNTUNE_SWEEP_WIDE=1 timeout 60 $D/lntune_sweep bwd fp32 262144 2>&1 | tail -1
s tune_scale
OUT=/tmp/ts STEPS="1 2" COLD_S=200 WARM_S=100 TOTAL_S=330 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cp /tmp/ts/cold.err $O/cold.err; cp /tmp/ts/warm.err $O/warm.err
s done
grep -E "^total|last key|before the first|host phases|^runner" $O/cold_stats.txt $O/warm_stats.txt
tail -14 $O/tune_scale.log
