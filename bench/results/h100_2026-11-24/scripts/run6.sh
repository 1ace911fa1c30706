#!/usr/bin/env bash
# Session 19, GPU call 6 (issue 13): cold tune with the verification split (reference wait,
# downloads + compares), then step 3 (pruned vs exhaustive on the sample).
set -uo pipefail
D=$PWD/.devbuild/s19
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
O=${OUT:-/tmp}
OUT=/tmp/ts STEPS="1 3" COLD_S=${COLD_S:-270} TOTAL_S=${TOTAL_S:-560} bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
python3 bench/tune_trace_stats.py /tmp/ts/cold.trace > $O/cold_stats.txt 2>&1
gzip -c /tmp/ts/cold.trace > $O/cold.trace.gz
for f in sample_pruned sample_full; do cp /tmp/ts/$f.log $O/; gzip -c /tmp/ts/$f.trace > $O/$f.trace.gz; done
cp /tmp/ts/compare.txt $O/
grep -E "^total|host phases|last key" $O/cold_stats.txt
tail -22 $O/tune_scale.log
