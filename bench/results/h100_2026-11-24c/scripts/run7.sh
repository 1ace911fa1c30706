#!/usr/bin/env bash
# Session 21, GPU call 7 (issue 13): tune_scale steps 1-3 again at the final
# tuner code (a second sample after call 3), with step 3's traces brought back.
set -uo pipefail
D=$PWD/.devbuild/s21
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
s tune_scale
OUT=/tmp/ts STEPS="1 2 3" COLD_S=220 WARM_S=100 TOTAL_S=470 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
tar czf $O/traces.tgz -C /tmp/ts sample_pruned.trace sample_full.trace cold.err warm.err compare.txt 2>/dev/null
s done
grep -h "device buffers" /tmp/ts/cold.err /tmp/ts/warm.err
grep -E "^total|last key|host phases|^runner" $O/cold_stats.txt $O/warm_stats.txt
grep SLOWER $O/tune_scale.log | grep -v "pruned vs"
tail -12 $O/tune_scale.log
