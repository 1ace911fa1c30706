#!/usr/bin/env bash
# Call 3 (session 34, H200). o34 = 7d5efa5 (the forward's overhead cut);
# p34 = that + the defaults it asks for (16-bit LayerNorm forward of 2049-8192
# columns: 32 elements a thread in 256-thread CTAs; fp32 backward of
# 4097-8192 columns over many rows, no residual: the wide kernel in 8 warps).
# Phase 1, alone: A/B o34 against p34 (two rounds) at x = 512 MiB, training
# sizes and decode; every config of p34 where a default may still be off.
source bench/gpu_call.sh
s "A/B"
timeout 240 bash bench/gpu_ab.sh ab_call3 2 $B/o34 $B/p34 -- \
  "fwd||fwd bf16 3000 4096 6000 8192" "fwd||fwd fp16 4096 8192" \
  "m4096|LNTUNE_SWEEP_M=4096|fwd bf16 4096 8192" "m1|LNTUNE_SWEEP_M=1|fwd bf16 4096 8192" "m32|LNTUNE_SWEEP_M=32|fwd bf16 8192" \
  "bwd||bwd fp32 6000 8192"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/p34
s "every config (p34)"
LNTUNE_SWEEP_EVERY=1 timeout 100 $B/p34/lntune_sweep fwd bf16 2048 16384 > $O/every_fwd_call3.log 2>&1; echo "fwd rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_OP=rmsnorm timeout 80 $B/p34/lntune_sweep fwd bf16 4096 8192 > $O/every_rms_call3.log 2>&1; echo "rms rc=$?"
(LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 80 $B/p34/lntune_sweep bwd fp32 8192
 LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 80 $B/p34/lntune_sweep bwd fp32 8192
 LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=rmsnorm timeout 80 $B/p34/lntune_sweep bwd fp32 8192) > $O/every_bwd_call3.log 2>&1; echo "bwd rc=$?"
grep -hE "default" $O/every_*_call3.log
s done
