#!/usr/bin/env bash
# Call 5: 8cc4b88. `lntune tune` of the default grid (cold), then
# bench_layernorm.py's M = 4096 grid with the tuned cache (lntune), the
# default heuristic (lntune-default) and PyTorch, bf16 and fp32, and the
# tuned-over-default table.
set -uo pipefail
D=$PWD/.devbuild/s29c
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "tune (default grid, cold)"
/usr/bin/time -f "wall %e s" timeout 400 $D/lntune tune --db /tmp/t.db > $O/tune_call5.log 2> $O/tune_call5.err; echo "rc=$?"; tail -3 $O/tune_call5.err; tail -3 $O/tune_call5.log
grep -E "bwd_dx (bf16|fp32) N=[0-9]+ M-bucket 4" $O/tune_call5.log | head -20
export LNTUNE_CACHE=/tmp/t.db LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "grid (tuned, default, PyTorch)"
timeout 180 python3 bench/bench_layernorm.py --no-plots --section grid,tuned_vs_default --dtypes bf16,fp32 --providers lntune,lntune-default,torch --out /tmp/gt > $O/grid_tuned_call5.log 2>&1; echo "rc=$?"
cp /tmp/gt/results.md $O/grid_tuned_call5.md 2>/dev/null
gzip -f $O/tune_call5.log
s done
