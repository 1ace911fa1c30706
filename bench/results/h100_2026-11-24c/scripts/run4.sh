#!/usr/bin/env bash
# Session 21, GPU call 4 (issue 9): the eager backward node as a plain
# autograd Node (LNTUNE_TORCH_NODE_V2) as the default? The binding's GPU
# tests with it on, then host time per call interleaved (bench_host_step.py:
# torch, node v1 and node v2 batch by batch in one process).
set -uo pipefail
D=$PWD/.devbuild/s21
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_TORCH_EXT=on LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s build_ext
timeout 300 python3 -c "import lntune.torch as lt, torch; x=torch.randn(8,1024,device='cuda'); print('ext', lt._ext is not None, lt.layer_norm(x,(1024,)).shape)" > $O/ext.log 2>&1; echo "ext rc=$?"; tail -1 $O/ext.log
s pytest_v2
LNTUNE_TORCH_NODE_V2=1 timeout 280 python3 -m pytest -q -x -p no:cacheprovider tests/python/test_lntune_torch.py > $O/pytest_v2.log 2>&1; echo "pytest rc=$?"
s host
timeout 200 python3 bench/bench_host_step.py --rounds 31 > $O/host_step.log 2>&1; echo "host rc=$?"
s done
tail -3 $O/pytest_v2.log
cat $O/host_step.log | tail -22
