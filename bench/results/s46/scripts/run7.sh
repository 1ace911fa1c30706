#!/usr/bin/env bash
# Call 7 (session 46). s46f = s46e + the fused fp32 backward of 4097-8192
# columns in 16 warps from 16 rows an SM (was: over 8192 rows) + the wide
# backward in any count of warps (not in the space yet). The odd-warp
# configs' GPU test and memcheck; the A/B of the fp32 rule at M = 4096
# against s46a; the odd-warp configs alone against the default at 9216 and
# 17408 (LNTUNE_SWEEP_CONFIG, each in its own process).
source bench/gpu_call.sh
use s46f
s "cases"
cases 120 '*WideBackwardOddWarps*:*Variants*fp32*res*N8192*:*Variants*fp32*res*N6000*' '*WideBackwardOddWarps*'
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s46a $B/s46f -- \
  "addlnf8kM4k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd fp32 8192" \
  "addrmsf8kM4k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd fp32 8192" \
  "addlnf6kM4k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd fp32 6000"
s "odd warps"
one() { local tag=$1 cfg=$2; shift 2; LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_CONFIG="$cfg" timeout 30 $S "$@" 2>&1 | grep -E "of copy|rror" | sed "s/^/$tag /"; }
for a in 1 2; do
  one "ln9k default" default bwd bf16 9216
  for c in "block_size=4608 num_warps=9 rows_per_cta=3 group_size_m=132 cluster_size=2" \
           "block_size=4608 num_warps=9 rows_per_cta=4 group_size_m=132 cluster_size=2" \
           "block_size=4608 num_warps=9 rows_per_cta=3 group_size_m=198 cluster_size=2" \
           "block_size=4608 num_warps=18 rows_per_cta=3 group_size_m=132 cluster_size=2" \
           "block_size=4608 num_warps=18 rows_per_cta=4 group_size_m=66 cluster_size=2"; do one "ln9k" "$c" bwd bf16 9216; done
  one "ln17k default" default bwd bf16 17408
  for c in "block_size=8704 num_warps=17 rows_per_cta=2 group_size_m=66 cluster_size=2" \
           "block_size=8704 num_warps=17 rows_per_cta=3 group_size_m=66 cluster_size=2" \
           "block_size=8704 num_warps=17 rows_per_cta=2 group_size_m=132 cluster_size=2"; do one "ln17k" "$c" bwd bf16 17408; done
  (export LNTUNE_SWEEP_RESIDUAL=1
   one "add9k default" default bwd bf16 9216
   one "add9k" "block_size=4608 num_warps=9 rows_per_cta=3 group_size_m=132 cluster_size=2" bwd bf16 9216
   one "add9k" "block_size=4608 num_warps=18 rows_per_cta=4 group_size_m=66 cluster_size=2" bwd bf16 9216)
done
s done
