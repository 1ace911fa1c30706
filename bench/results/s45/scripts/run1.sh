#!/usr/bin/env bash
# Call 1 (session 45). s45a = main (s44f's kernels) with the fused residual
# backward's rows staged in shared memory (bwd_dx.cuh, staged_bwd: z, dy
# and dz by cp.async a row ahead; before: dz in registers with x and dy,
# the next row prefetched into L2). The same defaults: A/B s44f -> s45a,
# the residual cases and memcheck, every fused config at 1024-8192.
source bench/gpu_call.sh
use s45a
s "cases"
cases 150 '*res*:*Resid*:*v0_N1000_bwd*:*v1_N1000_bwd*' '*Variants*resbf16*:*Variants*resfp32*N37*:*DresidualInPlace*'
s "A/B"
A=LNTUNE_SWEEP_RESIDUAL=1
OUT=$O bash bench/gpu_ab.sh ab1 2 $B/s44f $D -- "addln|$A|bwd bf16 1024 2048 4096 6144 8192" \
  "addrms|$A LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1024 4096 8192" "addln16|$A|bwd fp16 1024 4096" \
  "addln32|$A|bwd fp32 1024 2048 4096" "m4k|$A LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048 4096" | grep -v copy; echo "ab rc=$?"
s "every fused config"
(export LNTUNE_SWEEP_RESIDUAL=1; sw addln 130 bwd bf16 1024 4096 8192)
s done
