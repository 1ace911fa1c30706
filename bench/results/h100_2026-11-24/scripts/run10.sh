#!/usr/bin/env bash
# Session 19, GPU call 10: after the review's tuner changes (baseline = launcher default,
# related_plan, one timer): tuner GPU tests and a short tune of bf16 at three N (priors included).
set -uo pipefail
D=$PWD/.devbuild/s19
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
LNTUNE_CACHE=off timeout 100 $D/tuner_gpu_test --gtest_brief=1 2>&1 | tail -n 3; echo "tuner_gpu_test rc=$?"
LNTUNE_CACHE=off timeout 100 $D/tuner_devices_gpu_test --gtest_brief=1 2>&1 | tail -n 3
rm -f /tmp/s.db*; timeout 150 $D/lntune tune --db /tmp/s.db --dtype bf16 --n 1024,4096,16384 --budget 120 --trace /tmp/s.trace > $O/short.log 2>&1; echo "tune rc=$?"
python3 bench/tune_trace_stats.py /tmp/s.trace | grep -E "^total|host phases|last key"
tail -n 8 $O/short.log
