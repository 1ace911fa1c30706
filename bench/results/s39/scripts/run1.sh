#!/usr/bin/env bash
# Call 1 (session 39). s39a = main + the wide forward's configs of 64
# columns a thread at two CTAs a SM (8 warps, 16384-column slabs, weight and
# bias read from L2 with each row's output). Screens them against the
# defaults (same build, separate processes, two rounds), the 16-bit backward
# with an fp32 weight at 2 stages and two CTAs a SM (checklist s38 item 4),
# then the forward's correctness over the space (SmemForward: every
# shared-memory and wide forward config of its cases against the reference).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39a
cfg() { echo "LNTUNE_SWEEP_CONFIG=block_size=$1,num_warps=8,rows_per_cta=$2,group_size_m=$3,cluster_size=$4"; }
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab1 2 $B/s39a -- \
  "def||fwd bf16 65536" "c4r3|$(cfg 16384 3 66 4)|fwd bf16 65536" "c4r2|$(cfg 16384 2 66 4)|fwd bf16 65536" \
  "c8r3x2|$(cfg 8192 3 33 8)|fwd bf16 65536" \
  "def||fwd fp16 65536" "c4r3|$(cfg 16384 3 66 4)|fwd fp16 65536" \
  "def||fwd bf16 131072" "c8r3|$(cfg 16384 3 33 8)|fwd bf16 131072" "c8r2|$(cfg 16384 2 33 8)|fwd bf16 131072" \
  "def||fwd bf16 262144" "c16r3|$(cfg 16384 3 16 16)|fwd bf16 262144" "c16r2|$(cfg 16384 2 16 16)|fwd bf16 262144" \
  "def||fwd fp16 262144" "c16r3|$(cfg 16384 3 16 16)|fwd fp16 262144" \
  "rdef|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 262144" "rc16r3|LNTUNE_SWEEP_OP=rmsnorm $(cfg 16384 3 16 16)|fwd bf16 262144" \
  "rdef|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 65536" "rc4r3|LNTUNE_SWEEP_OP=rmsnorm $(cfg 16384 3 66 4)|fwd bf16 65536" \
  "wdef|LNTUNE_SWEEP_W=fp32|bwd bf16 16384" "wc2r2|LNTUNE_SWEEP_W=fp32 $(cfg 8192 2 132 2)|bwd bf16 16384" \
  "wdef|LNTUNE_SWEEP_W=fp32|bwd bf16 65536" "wc8r2|LNTUNE_SWEEP_W=fp32 $(cfg 8192 2 32 8)|bwd bf16 65536"
s "SmemForward"
timeout 300 $B/s39a/gpu_norms_test --gtest_filter='Norms/SmemForward.*:*DegenerateRows*:*ConstantRows*' > $O/smemfwd_call1.log 2>&1; echo "smemfwd rc=$?"
grep -E "smem fwd|FAILED|OK \]|PASSED" $O/smemfwd_call1.log | head -40
s done
