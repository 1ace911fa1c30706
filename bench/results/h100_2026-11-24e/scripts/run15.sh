#!/usr/bin/env bash
# Session 23, GPU call 15: after the review (the wide kernels' st.async pair
# push and L2 prefetch moved into common.cuh, no change to the instructions
# they emit): the wide backward's test and the shared-memory/wide forward
# test, which now requires wide configs to run where the space offers them.
set -uo pipefail
D=$PWD/.devbuild/s23
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
LNTUNE_CACHE=off timeout 250 $D/gpu_test --gtest_brief=1 --gtest_filter='Gpu.WideBackward*' > $O/wide_bwd.log 2>&1 &
LNTUNE_CACHE=off timeout 250 $D/gpu_norms_test --gtest_filter='Norms/SmemForward.*' > $O/smem_forward_test.log 2>&1 &
wait
grep -hE "PASSED|FAILED|Failure|wide|smem fwd" $O/wide_bwd.log $O/smem_forward_test.log | head -24
