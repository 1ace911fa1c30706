#!/usr/bin/env bash
# Session 25, GPU call 1 (issue 13) on nvidia-h200-x2: tuner_devices_gpu_test
# on both GPUs, then all four steps of tune_scale.sh (cold on one GPU, warm
# re-tune, pruned vs exhaustive, cold on two GPUs) on the same machine.
set -uo pipefail
D=$PWD/.devbuild/s25
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi -L; nvidia-smi topo -m 2>&1 | head -4; nproc
s tuner_devices_gpu_test
LNTUNE_CACHE=off timeout 100 $D/tuner_devices_gpu_test > $O/tuner_devices_gpu_test.log 2>&1; echo "rc=$?"
grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|gpu [0-9]+:" $O/tuner_devices_gpu_test.log | head -20
s tune_scale
OUT=/tmp/ts COLD_S=200 WARM_S=60 TOTAL_S=470 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/dual.trace > $O/dual_stats.txt 2>&1
cp /tmp/ts/compare.txt $O/compare.txt 2>/dev/null
cp /tmp/ts/dual.log $O/dual.log 2>/dev/null
grep -h "failed —" /tmp/ts/cold.err /tmp/ts/dual.err | head -5
s done
grep -E "SLOWER|within" $O/compare.txt | head -8
tail -22 $O/tune_scale.log
