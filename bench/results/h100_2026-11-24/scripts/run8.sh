#!/usr/bin/env bash
# Session 19, GPU call 8 (issue 9): the host-time section through lntune.torch three times
# (the 1.1x step / 1.0x forward targets, cell by cell), all dtypes, against PyTorch in the same process.
set -uo pipefail
D=$PWD/.devbuild/s19
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_TORCH_EXT=on LNTUNE_CACHE=off
python3 -c "import lntune.torch as lt, torch; x=torch.randn(8,1024,device='cuda'); print(lt.layer_norm(x,(1024,)).shape)" 2>&1 | tail -1
for r in 1 2 3; do
  timeout 150 python3 bench/bench_layernorm.py --no-plots --section host --providers lntune-default,torch --out $O/host$r > $O/host$r.log 2>&1; echo "run $r rc=$?"
done
for r in 1 2 3; do echo "== run $r"; grep -iE "host|ratio|step|fwd" $O/host$r.log | tail -14; done
