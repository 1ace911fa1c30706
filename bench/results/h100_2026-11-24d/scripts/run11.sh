#!/usr/bin/env bash
# Session 22, GPU call 11 (issue 10): the shared-memory forward offered from
# N > 8192 and the default for 16-bit rows of 8193-16384 columns without a
# residual: correctness (every config of the space at N = 12288 in gpu_test,
# the shared-memory configs at N = 12296 and 16384 in gpu_norms_test), the
# default against the space (LayerNorm bf16/fp16, RMSNorm bf16), then the
# bandwidth-regime table again.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s tests
LNTUNE_CACHE=off timeout 200 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.EverySearchSpaceConfigIsCorrect' 2>&1 | grep -E "PASSED|FAILED|Failure|configs" | head -5
LNTUNE_CACHE=off timeout 150 $D/gpu_norms_test --gtest_brief=1 --gtest_filter='*SmemForward*' 2>&1 | grep -E "PASSED|FAILED|Failure" | head -5
s sweeps
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd bf16 10240 12288 16384 2>&1 | tail -3
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep fwd fp16 12288 16384 2>&1 | tail -2
LNTUNE_CACHE=off LNTUNE_SWEEP_OP=rmsnorm timeout 100 $D/lntune_sweep fwd bf16 16384 2>&1 | tail -1
s bandwidth
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
grep -E "bandwidth (fp16|bf16|fp32) M=" $O/bandwidth.log | cut -c12-220 | grep -E "N=(8192|16384|65536):"
s done
