#!/usr/bin/env bash
# Call 4 (session 42). s42c = s42b + call 3's forward rules (16-bit rows of
# 1025-4095 columns not a power of two at 32 elements a thread, one row a
# CTA; the 16-bit forward in clusters of 2 at 4 stages below 32768 columns)
# and the fp32 backward's register rule up to 8191 columns. A/B s42b -> s42c
# (2 rounds), also at M = 16384 (the rule takes M > 8192) and with RMSNorm.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab4 2 $B/s42b $B/s42c -- "fwd||fwd bf16 1152 1536 2048 2304 2560 3072 3840 26000 28672 30000" \
  "fwd||fwd fp16 1536 2560 28672" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 1536 2560" \
  "m16k|LNTUNE_SWEEP_M=16384|fwd bf16 1536 2560 3072" "bwd||bwd fp32 6656 7168" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 7168"
s done
