#!/usr/bin/env bash
# Session 21, GPU call 6 (issue 9): the tutorial grid's end-to-end backward
# (M = 4096, autograd, node v2 the default) against PyTorch, interleaved
# round by round (bench_host_step.py --grid), fp16, bf16, fp32; then the
# host-time table again.
set -uo pipefail
D=$PWD/.devbuild/s21
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_TORCH_EXT=on LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s build_ext
timeout 300 python3 -c "import lntune.torch as lt, torch; from lntune import _torch_ext; x=torch.randn(8,1024,device='cuda'); print('ext', lt._ext is not None, 'node_v2', _torch_ext.NODE_V2)" > $O/ext.log 2>&1; echo "ext rc=$?"; tail -1 $O/ext.log
s grid_e2e
timeout 240 python3 bench/bench_host_step.py --grid --rounds 21 --calls 10 > $O/grid_e2e.log 2>&1; echo "grid rc=$?"
s host
timeout 120 python3 bench/bench_host_step.py --rounds 31 > $O/host_step.log 2>&1; echo "host rc=$?"
s done
grep -E "below" $O/grid_e2e.log
tail -1 $O/host_step.log
