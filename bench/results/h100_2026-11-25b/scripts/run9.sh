#!/usr/bin/env bash
# Session 26, GPU call 9 (issue 10): `lntune tune` of the default grid (cold,
# this build), then bench_layernorm.py's M = 4096 grid with the tuned cache
# (lntune), the default heuristic (lntune-default) and PyTorch, bf16 and fp32,
# and the tuned-over-default table.
set -uo pipefail
D=$PWD/.devbuild/s26
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s "tune (default grid, cold)"
/usr/bin/time -f "wall %e s" timeout 330 $D/lntune tune --db /tmp/t.db > $O/tune.log 2> $O/tune.err; echo "rc=$?"; tail -3 $O/tune.err; tail -3 $O/tune.log
export LNTUNE_CACHE=/tmp/t.db LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
s "grid (tuned, default, PyTorch)"
timeout 200 python3 bench/bench_layernorm.py --no-plots --section grid,tuned_vs_default --dtypes bf16,fp32 --providers lntune,lntune-default,torch --out /tmp/gt > $O/grid_tuned.log 2>&1; echo "rc=$?"
cp /tmp/gt/results.md $O/grid_tuned.md 2>/dev/null
s done
