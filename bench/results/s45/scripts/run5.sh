#!/usr/bin/env bash
# Call 5 (session 45). s45e = s45d with the fused 16-bit entries at 3072 and
# 5120 (call 4's sweep) and plain LayerNorm's 16-bit backward of 12289-16384
# columns at one cluster per two SMs (call 4's configs alone: 16384 89.5 ->
# 92). The A/B s45d -> s45e, then the tables: RMSNorm and the fused forms at
# x = 512 MiB (bench_norms.py), the M = 4096 backward.
source bench/gpu_call.sh
use s45e
s "A/B"
A=LNTUNE_SWEEP_RESIDUAL=1
OUT=$O bash bench/gpu_ab.sh ab5 2 $B/s45d $D -- "addln|$A|bwd bf16 3072 5120" \
  "addrms|$A LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 3072 5120" "b16k||bwd bf16 13312 16384" "f16k||bwd fp16 16384" \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 16384" "rms16k|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384" | grep -v copy; echo "ab rc=$?"
s "tables"
STEP_SECONDS=170 TABLES="ext norms train" OUT=$O bash bench/gpu_tables.sh $D s45e; echo "tables rc=$?"
s done
