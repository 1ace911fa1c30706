#!/usr/bin/env bash
# Session 21, GPU call 8: issue 13's cold tune and pruned-vs-exhaustive sample
# with the backward compared jointly (the trace's "joint" finalists); then the
# bandwidth-regime tables at the current defaults (issues 10 and 11).
set -uo pipefail
D=$PWD/.devbuild/s21
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tune_scale
OUT=/tmp/ts STEPS="1 3" COLD_S=220 TOTAL_S=330 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
cp /tmp/ts/compare.txt $O/compare.txt
s bandwidth
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
timeout 120 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/*.md $O/ 2>/dev/null
s done
grep -E "joint|other P|SLOWER" $O/compare.txt | grep -v "pruned vs" | head -30
tail -8 $O/tune_scale.log
grep -E "N=(65536|262144)" $O/bandwidth.log | cut -c12-200
