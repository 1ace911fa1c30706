#!/usr/bin/env bash
# Session 22, GPU call 6 (issues 13 and 10): the oracle's chunk sums on
# several threads: tuner_gpu_test, then tune_scale.sh steps 1-3 with trace
# statistics; then the whole gpu_test (the wide backward's x-only staging and
# the 16-bit cluster-2 default among its configs).
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tuner_gpu_test
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/tuner_gpu_test.log | head -10
s tune_scale
OUT=/tmp/ts STEPS="1 2 3" COLD_S=200 WARM_S=100 TOTAL_S=440 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
cp /tmp/ts/compare.txt $O/compare.txt 2>/dev/null
grep -h "failed —" /tmp/ts/cold.err /tmp/ts/warm.err | head -5
grep -E "^total|last key|host phases|^runner" $O/cold_stats.txt $O/warm_stats.txt
grep -E "SLOWER" $O/compare.txt | head -5
tail -12 $O/tune_scale.log | head -9
s gpu_test
LNTUNE_CACHE=off timeout 280 $D/gpu_test --gtest_brief=1 > $O/gpu_test.log 2>&1; echo "gpu_test rc=$?"
grep -hE "PASSED|FAILED|Failure|\[ (configs|wide)" $O/gpu_test.log | head -10
s done
