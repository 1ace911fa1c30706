#!/usr/bin/env bash
# Call 2 (session 39). s39b = s39a + the wide forward's LayerNorm statistics
# in one pass over full slabs (fwd_wide.cuh, kOnePass: each thread's
# deviations from its first column, Chan's merge over the CTA, one barrier
# where the two passes took four and a second pass). A/B against s39a (two
# rounds, separate processes) on the LayerNorm forwards that take that path
# (16-bit rows of 32K-256K columns), then the forward tests on s39b.
source bench/gpu_call.sh
cfg() { echo "LNTUNE_SWEEP_CONFIG=block_size=$1,num_warps=$2,rows_per_cta=$3,group_size_m=$4,cluster_size=$5"; }
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab2 2 $B/s39a $B/s39b -- \
  "def||fwd bf16 32768 65536 131072" "def||fwd fp16 65536 262144" \
  "c16w16r4|$(cfg 16384 16 4 7 16)|fwd bf16 262144" "c16w16r3|$(cfg 16384 16 3 7 16)|fwd bf16 262144" \
  "res|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 65536 262144" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 262144"
s "tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39b
timeout 300 $B/s39b/gpu_norms_test --gtest_filter='Norms/SmemForward.*:SmemForwardExactness.*' > $O/fwdtests_call2.log 2>&1; echo "norms rc=$?"
grep -E "smem fwd|exact|offset|FAILED|Failure|PASSED" $O/fwdtests_call2.log | head -40
timeout 200 $B/s39b/gpu_test --gtest_filter='Gpu.DegenerateRows*:Gpu.MoreThan2Pow31*' > $O/gputests_call2.log 2>&1; echo "gpu_test rc=$?"
grep -E "FAILED|Failure|PASSED|OK \]" $O/gputests_call2.log | head
s done
