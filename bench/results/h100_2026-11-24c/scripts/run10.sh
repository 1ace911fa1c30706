#!/usr/bin/env bash
# Session 21, GPU call 10 (issue 9): the tutorial grid's end-to-end backward,
# interleaved, again (41 rounds), with a confidence interval per cell.
set -uo pipefail
D=$PWD/.devbuild/s21
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_TORCH_EXT=on LNTUNE_CACHE=off
timeout 300 python3 -c "import lntune.torch as lt; print('ext', lt._ext is not None)" > $O/ext.log 2>&1; tail -1 $O/ext.log
timeout 280 python3 bench/bench_host_step.py --grid --rounds 41 --calls 10 > $O/grid_e2e.log 2>&1; echo "grid rc=$?"
grep -E "below|x0\\.9" $O/grid_e2e.log
