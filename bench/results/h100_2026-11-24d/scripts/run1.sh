#!/usr/bin/env bash
# Session 22, GPU call 1 (issue 10): the wide backward staging x alone
# (dy read twice, prefetched into L2) for fp32 rows of 256K columns:
# correctness (every wide config of the space at five shapes, fp32 N = 262144
# strided among them), then the sweep of the wide configs against the copy,
# the 16-bit backward at N = 5120-8192 (cluster-2 slabs), and the fp32
# forward at 256K (every config), then PyTorch beside lntune's default in the
# bandwidth regime.
set -uo pipefail
D=$PWD/.devbuild/s22
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s() { echo "=== $1 ($(date +%T))"; }
s wide_test
LNTUNE_CACHE=off timeout 200 $D/gpu_test --gtest_filter='Gpu.WideBackward*' 2>&1 | tail -4
s sweep_wide_fp32
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 90 $D/lntune_sweep bwd fp32 262144 131072 2>&1 | tee $O/sweep_wide_fp32.txt | tail -40
s sweep_bwd16
LNTUNE_CACHE=off timeout 100 $D/lntune_sweep bwd bf16 5120 6144 7168 8192 2>&1 | tail -5
LNTUNE_CACHE=off timeout 60 $D/lntune_sweep bwd fp16 8192 2>&1 | tail -2
s sweep_fwd_fp32
LNTUNE_CACHE=off LNTUNE_SWEEP_EVERY=1 timeout 60 $D/lntune_sweep fwd fp32 262144 2>&1 | tee $O/sweep_fwd_fp32.txt | sort -t'|' -k2 | tail -12
s torch_bandwidth
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te LNTUNE_CACHE=off
timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth.log 2>&1; echo "bandwidth rc=$?"
grep -E "N=(65536|262144)" $O/bandwidth.log | cut -c1-200
s done
