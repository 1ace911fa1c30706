#!/usr/bin/env bash
# Call 4 (session 46). s46d = s46b + the H200 defaults of the fused 16-bit
# backward at 32768 / 65536 / 131072 columns with dz staged (8192-column
# slabs in clusters of 4 / 8, 16 warps, 4 stages; 16384-column slabs in
# clusters of 8 at 2 stages, 14 clusters). The new Variants cases and
# memcheck, the A/B against s46a (HEAD before the session's kernel work),
# then every config of add + RMSNorm bf16 16384 and the fused 262144.
source bench/gpu_call.sh
use s46d
s "cases"
cases 150 '*Variants*res*N32768*:*Variants*res*N65536*:*Variants*res*N131072*:*Variants*res*N16384*:*DresidualInPlace*' '*Variants*resbf16*N32768*:*Variants*N131072*'
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s46a $B/s46d -- \
  "addln32k|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 32768" \
  "addln64k|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 65536" \
  "addln64kh|LNTUNE_SWEEP_RESIDUAL=1|bwd fp16 65536" \
  "addrms64k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 65536" \
  "addln128k|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 131072" \
  "addrms128k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 131072" \
  "addln64kM1k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=1024|bwd bf16 65536"
s "every config"
(export LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm; sw rms16k 60 bwd bf16 16384)
(export LNTUNE_SWEEP_RESIDUAL=1; sw ln256k 80 bwd bf16 262144)
(export LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm; sw rms256k 80 bwd bf16 262144)
s done
