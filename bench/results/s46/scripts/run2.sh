#!/usr/bin/env bash
# Call 2 (session 46). The wide backward with the fused backward's dz staged
# beside x and dy (STAGE_DZ, gen::wide_stages_dz) where it fits: s46b; s46c
# = s46b with the unguarded passes for add + LayerNorm too where dz is
# staged. Baseline s46a (HEAD cbd9f43). Cases and memcheck on s46c, the A/B
# of the defaults (16384: 8192-column slabs in clusters of 2, 4 stages), then
# every config of add + LayerNorm bf16 at 65536 (where 8192-column slabs in
# clusters of 8 stage dz) on s46a and s46c.
source bench/gpu_call.sh
use s46c
s "cases"
cases 150 '*Variants*res*N20001*:*VariantSpace*v1_N12288_bwd*:*DresidualInPlace*:*WideBackwardAtTwoCtas*' '*DresidualInPlace*:*WideBackwardAtTwoCtas*'
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s46a $B/s46b $B/s46c -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384" \
  "addln16|LNTUNE_SWEEP_RESIDUAL=1|bwd fp16 16384" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384" \
  "addlnM4k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd bf16 16384" \
  "addln12k|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 12288"
s "every config 65536"
use s46a
(export LNTUNE_SWEEP_RESIDUAL=1; sw a65k 80 bwd bf16 65536)
use s46c
(export LNTUNE_SWEEP_RESIDUAL=1; sw c65k 80 bwd bf16 65536)
(export LNTUNE_SWEEP_RESIDUAL=1; sw c16k 70 bwd bf16 16384)
s done
