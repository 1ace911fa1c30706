#!/usr/bin/env bash
# Session 19, GPU call 2 (issue 13): where a key's host time goes (trace phases), cold 150 s + warm 40 s.
set -uo pipefail
D=$PWD/.devbuild/s19
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
OUT=/tmp/ts STEPS="1 2" COLD_S=${COLD_S:-150} WARM_S=${WARM_S:-40} TOTAL_S=${TOTAL_S:-230} bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/warm.trace > $O/warm_stats.txt 2>&1
gzip -c /tmp/ts/cold.trace > $O/cold.trace.gz; gzip -c /tmp/ts/warm.trace > $O/warm.trace.gz
grep -E "^total|host phases|last key|per key|verification|GPU s" $O/cold_stats.txt $O/warm_stats.txt
tail -12 $O/tune_scale.log
