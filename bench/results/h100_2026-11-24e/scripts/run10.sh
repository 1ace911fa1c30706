#!/usr/bin/env bash
# Session 23, GPU call 10: at the final kernels and defaults, the tuner (its
# GPU tests, then a cold and a warm tune of the default grid, whose space now
# has the wide forward's configs for N > 16384) and the Python binding's
# tests (the new defaults reach lntune.torch too).
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tuner_gpu_test
LNTUNE_CACHE=off timeout 150 $D/tuner_gpu_test --gtest_brief=1 > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/tuner_gpu_test.log | head -5
s tune_scale
OUT=/tmp/ts STEPS="1 2" COLD_S=200 WARM_S=100 TOTAL_S=300 bash bench/tune_scale.sh $D > $O/tune_scale.log 2>&1
grep -h "failed —" /tmp/ts/cold.err /tmp/ts/warm.err | head -5
tail -10 $O/tune_scale.log
s pytest
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_TORCH_EXT=on LNTUNE_CACHE=off
timeout 200 python3 -c "import lntune.torch as lt, torch; from lntune import _torch_ext; x=torch.randn(8,1024,device='cuda'); print('ext', lt._ext is not None)" > $O/ext.log 2>&1; echo "ext rc=$?"; tail -1 $O/ext.log
timeout 240 python3 -m pytest -q -x -p no:cacheprovider tests/python > $O/pytest.log 2>&1; echo "pytest rc=$?"
tail -3 $O/pytest.log
s done
