#!/usr/bin/env bash
# Session 22, GPU call 2 (issue 10): the wide backward keeping x's stages
# alone (weight read from global memory too: 3 stages of fp32 16384-column
# slabs fit), against 2 stages with the weight slab; the 16-bit backward's
# cluster-2 default at N = 7168-8192 (M > 8192); the training-size (M = 4096)
# and fp32 sweeps at N = 8192.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s wide_test
LNTUNE_CACHE=off timeout 200 $D/gpu_test --gtest_filter='Gpu.WideBackward*' 2>&1 | tail -3
s sweep_wide_fp32
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 90 $D/lntune_sweep bwd fp32 262144 2>&1 | tee $O/sweep_wide_fp32.txt | tail -14
s sweep_bwd16
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep bwd bf16 7168 8192 2>&1 | tail -2
LNTUNE_CACHE=off timeout 60 $D/lntune_sweep bwd fp16 8192 2>&1 | tail -1
s sweep_train_8192
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep train bf16 8192 2>&1 | tail -2
s sweep_fp32_8192
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 timeout 100 $D/lntune_sweep bwd fp32 8192 2>&1 | tee $O/sweep_fp32_8192.txt | sort -t'%' -k1 | tail -3; tail -1 $O/sweep_fp32_8192.txt
s done
