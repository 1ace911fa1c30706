#!/usr/bin/env bash
# Call 3 (session 39). s39c = s39b with the one-pass statistics in clusters
# of 16 only (call 2: slower in clusters of 4 and 8), the full-slab path
# instantiated only where it is taken (if constexpr: the 64-column configs
# failed to compile in call 2), and the wide backward's weight slab laid
# out by 16-byte pieces (an fp32 weight beside 16-bit rows was read as two
# loads at a 32-byte stride). A/B against s39a (two rounds); the 16-bit
# forward at 512 columns with 32 rows a CTA (checklist s38 item 6); then the
# forward tests and the wide backward's configs on s39c.
source bench/gpu_call.sh
cfg() { echo "LNTUNE_SWEEP_CONFIG=block_size=$1,num_warps=$2,rows_per_cta=$3,group_size_m=$4,cluster_size=$5"; }
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab3 2 $B/s39a $B/s39c -- \
  "def||fwd fp16 262144" "def||fwd bf16 65536 131072" "res|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 262144" \
  "w|LNTUNE_SWEEP_W=fp32|bwd bf16 16384 65536" "wc2r2|LNTUNE_SWEEP_W=fp32 $(cfg 8192 8 2 132 2)|bwd bf16 16384" \
  "wc8r2|LNTUNE_SWEEP_W=fp32 $(cfg 8192 8 2 32 8)|bwd bf16 65536" "def||bwd bf16 16384" \
  "def||fwd bf16 512" "r32|$(cfg 512 16 32 0 1)|fwd bf16 512" "def||fwd fp16 512" "r32|$(cfg 512 16 32 0 1)|fwd fp16 512"
s "tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39c
timeout 240 $B/s39c/gpu_norms_test --gtest_filter='Norms/SmemForward.*:SmemForwardExactness.*' > $O/fwdtests_call3.log 2>&1; echo "norms rc=$?"
grep -E "exact|offset|FAILED|Failure|PASSED" $O/fwdtests_call3.log | head -20
timeout 240 $B/s39c/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*:Gpu.DegenerateRows*' > $O/gputests_call3.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide |FAILED|Failure|PASSED|OK \]" $O/gputests_call3.log | head
s done
