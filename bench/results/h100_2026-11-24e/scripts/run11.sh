#!/usr/bin/env bash
# Session 23, GPU call 11: every pytest file under tests/python at the final
# library (call 10's run stopped at its 240 s limit, 42% through, no failure).
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_TORCH_EXT=on LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s build_ext
timeout 200 python3 -c "import lntune.torch as lt, torch; from lntune import _torch_ext; x=torch.randn(8,1024,device='cuda'); print('ext', lt._ext is not None)" > $O/ext.log 2>&1; echo "ext rc=$?"; tail -1 $O/ext.log
s pytest
timeout 480 python3 -m pytest -q -p no:cacheprovider tests/python > $O/pytest.log 2>&1; echo "pytest rc=$?"
tail -3 $O/pytest.log
s done
