#!/usr/bin/env bash
# Call 9 (session 54). Calls 5-8 found that the library's forward of 256
# columns pays 2.5 points of copy for its row statistics, and that the
# probe's kernel, which loads its weight and bias with x, stores them
# nearly free (99.1 against 100.2) from shared memory after a CTA barrier,
# while the library's kernel lost a point so (95.6 against 96.7). s54c:
# s54b (statistics by CTA) plus the single tile's weight and bias loaded
# with x (at most two accesses a thread; 48 registers against 40 at bf16
# 256 in 32 rows a CTA). Every forward config of the forms' spaces at
# M = 300 (VariantSpace) on s54c with memcheck, then the three builds'
# defaults, two rounds.
source bench/gpu_call.sh
use s54c
s cases
cases 200 '*VariantSpace*fwd' '*VariantSpace*v0_N1000_fwd'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s54a $B/s54b $B/s54c -- \
  "ln||fwd bf16 256 512 1024 2048" "lnh||fwd fp16 256" "ln32||fwd fp32 256" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256" "add|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 256 4096" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 1024"
s done
