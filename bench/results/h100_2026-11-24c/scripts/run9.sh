#!/usr/bin/env bash
# Session 21, GPU call 9 (issue 13): related keys' search with group_size_m
# free of the two-field limit; cold tune and pruned-vs-exhaustive (joint).
set -uo pipefail
D=$PWD/.devbuild/s21
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tune_scale
OUT=/tmp/ts STEPS="1 3" COLD_S=220 TOTAL_S=330 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
cp /tmp/ts/compare.txt $O/compare.txt
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
s done
grep -E "SLOWER|other P" $O/compare.txt | grep -v "pruned vs"
grep -E "^total|last key" $O/cold_stats.txt
tail -9 $O/tune_scale.log
