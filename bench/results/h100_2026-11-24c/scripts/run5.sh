#!/usr/bin/env bash
# Session 21, GPU call 5 (issue 9): node v2 as the default. The binding's GPU
# tests with PyTorch's OpInfo/ModuleInfo samples (expecttest carried), then the
# tutorial grid end to end (M = 4096, autograd) in fp16, bf16 and fp32, twice.
set -uo pipefail
D=$PWD/.devbuild/s21
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_TORCH_EXT=on LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s build_ext
timeout 300 python3 -c "import lntune.torch as lt, torch; from lntune import _torch_ext; x=torch.randn(8,1024,device='cuda'); print('ext', lt._ext is not None, 'node_v2', _torch_ext.NODE_V2)" > $O/ext.log 2>&1; echo "ext rc=$?"; tail -1 $O/ext.log
s pytest
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_lntune_torch.py > $O/pytest_torch.log 2>&1; echo "pytest torch rc=$?"
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/python/test_lntune_torch_norms.py -k "opinfo or OpInfo or module or Module" > $O/pytest_norms.log 2>&1; echo "pytest norms rc=$?"
s grid
for r in 1 2; do for d in fp16 bf16 fp32; do
  timeout 100 python3 bench/bench_layernorm.py --no-plots --section grid --dtypes $d --providers lntune-default,torch --out /tmp/g$r$d > $O/grid_${d}_$r.log 2>&1; echo "grid $d run $r rc=$?"
done; done
s done
tail -1 $O/pytest_torch.log; grep -iE "skip" $O/pytest_torch.log | head -5; tail -1 $O/pytest_norms.log
python3 bench/grid_ratios.py $O/grid_*_1.log $O/grid_*_2.log
