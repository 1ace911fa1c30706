#!/usr/bin/env bash
# Call 8 (session 55). s55e = s55d + call 7's fused rules (generator/
# space.cpp: fp32 add + norm 8192 in 32 warps of 2 rows, 16-bit add +
# RMSNorm 8192 / 16384 the whole row in 32 warps, past 64 rows an SM).
# A/B against s55d, two rounds, the rules' shapes, fp16 (not swept), an
# M past the bound (M = 20000) and the fp32-stream control; then the
# Python harness's fused rows at 8192 / 16384 on s55e.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s55d $B/s55e -- \
  "add32|LNTUNE_SWEEP_RESIDUAL=1|fwd fp32 8192" \
  "rms32|LNTUNE_SWEEP_RESIDUAL=1&LNTUNE_SWEEP_OP=rmsnorm|fwd fp32 8192" \
  "rms|LNTUNE_SWEEP_RESIDUAL=1&LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 8192 16384" \
  "rmsh|LNTUNE_SWEEP_RESIDUAL=1&LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 8192 16384" \
  "m20k|LNTUNE_SWEEP_RESIDUAL=1&LNTUNE_SWEEP_OP=rmsnorm&LNTUNE_SWEEP_M=20000|fwd bf16 8192" \
  "m20k32|LNTUNE_SWEEP_RESIDUAL=1&LNTUNE_SWEEP_M=20000|fwd fp32 8192" \
  "rmsf32s|LNTUNE_SWEEP_RESIDUAL=fp32&LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 8192"
use s55e
ext
s "fused 8192 16384"
timeout 150 python3 bench/bench_norms.py --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune \
  --copy-mib match --ops add_ln,add_rms --bandwidth-ns 8192,16384 --out $O/fused > $O/fused.log 2>&1; echo "rc=$?"
grep -E "add" $O/fused/norms.md
s done
