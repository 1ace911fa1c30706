#!/usr/bin/env bash
# lntune.torch's opt-in C++ paths on a GPU (LNTUNE_TORCH_NATIVE_OPS=1: the ops'
# C++ CUDA kernels; LNTUNE_TORCH_NODE_V2=1: the eager backward's plain autograd
# Node): the whole binding suite with both on (the default run in gpu_all.sh has
# them off; its parametrized tests switch them in-process too), and the
# extension's GPU-free checks.
#   bash .ci/gpu_torch_native.sh DIR    (DIR holds liblntune.so)
set -uo pipefail
dir=${1:?usage: gpu_torch_native.sh DIR}
rc=0
export LNTUNE_LIBRARY="$dir/liblntune.so" PYTHONPATH="python${PYTHONPATH:+:$PYTHONPATH}"
LNTUNE_TORCH_NATIVE_OPS=1 LNTUNE_TORCH_NODE_V2=1 LNTUNE_TORCH_EXT=on \
  python3 -m pytest -q -rfs tests/python/test_lntune_torch.py >"${OUT:-/tmp}/python_torch_native.log" 2>&1 || rc=1
grep -E "^(FAILED|ERROR)|passed|failed" "${OUT:-/tmp}/python_torch_native.log" | tail -25
python3 -m pytest -q -rfs tests/python/test_torch_ext_cpu.py tests/python/test_torch_ext_variants_cpu.py >"${OUT:-/tmp}/python_torch_ext_cpu.log" 2>&1 || rc=1
grep -E "^(FAILED|ERROR)|passed|failed" "${OUT:-/tmp}/python_torch_ext_cpu.log" | tail -10
exit $rc
