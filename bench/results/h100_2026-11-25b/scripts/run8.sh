#!/usr/bin/env bash
# Session 26, GPU call 8 (issue 10): call 7's grid had the bf16 backward at
# M = 4096, N = 1024 at 304 GB/s through lntune.torch (session 23:
# 732). Kernel time first (lntune_sweep train, the default pair of dx and
# dW/dB, session-25 build against this one), then the quick grid twice.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "train (kernel time, M = 4096)"
for b in base new; do echo "--- $b"; LNTUNE_SWEEP_CONFIG=default timeout 100 $D/$b/lntune_sweep train bf16 1024 2048 4096 2>&1 | grep -v "^ "; done
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
for i in 1 2; do
  s "quick grid $i"
  timeout 120 python3 bench/bench_layernorm.py --no-plots --quick --section grid --dtypes bf16 --providers lntune-default,torch --out /tmp/gq$i > $O/grid_quick_$i.log 2>&1; echo "rc=$?"
  grep "grid bf16" $O/grid_quick_$i.log
done
s done
