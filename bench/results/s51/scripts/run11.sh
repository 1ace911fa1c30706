#!/usr/bin/env bash
# Call 11 (session 51). Call 10's grid found the 16-bit backward at M =
# 4096, 2560-3584 columns, 58-67 -> 26-43% of copy end to end: the
# finishing entry's two-CTA bound (42a88f0) halved the registers of CTAs of
# 257-511 threads. s51h bounds it by the CTA's own (min(base, 2)); A/B
# against s51g, two rounds, with 1024 (the bound's gain) kept; the finish
# tests.
source bench/gpu_call.sh
use s51h
s gtests
gtests 120 'Gpu.*Finish*:Gpu.BackwardIsBitwise*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s51g $B/s51h -- \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 1024 2560 3072 3584" "m4kh|LNTUNE_SWEEP_M=4096|bwd fp16 3584" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 3072"
s done
