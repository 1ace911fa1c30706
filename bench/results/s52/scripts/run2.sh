#!/usr/bin/env bash
# Call 2 (session 52). s52c: fwd-fused-12288-ln-1024.patch with call 1's
# findings (generator/space.cpp): LayerNorm 1024 four rows a CTA to 32 rows
# an SM (not 48); 16-bit LayerNorm 3072 on the 4096-column tile in 4 warps
# at training rows; 16384 in 16 warps past 32 rows an SM; add + LayerNorm
# 12288 beside an fp32 stream on the 16384-column tile in 32 warps from 16
# rows an SM; the decode rule for 16-bit add + LayerNorm and RMSNorm of
# either width. Its new Variants against the float64 reference (memcheck on
# them), the A/B against main (s52a), two rounds, then every config of
# shapes still unmeasured on s52c.
source bench/gpu_call.sh
use s52c
s cases
cases 150 '*Variants*N12288*:*Variants*M4001_N1024_pad8*:*Variants*M3001_N3072*:*Variants*M5001_N16384*:*Variants*rmsnorm_fp32*M1_N12000*:*Variants*M200_N16384*' '*Variants*resfp32*M2201_N12288*:*Variants*M3001_N3072*:*Variants*M3_N12288*:*Variants*rmsnorm_fp32*M1_N12000*'
s ab
R=LNTUNE_SWEEP_RESIDUAL
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s52a $B/s52c -- \
  "s32bw|$R=fp32|fwd bf16 12288" "s32m4k|$R=fp32 LNTUNE_SWEEP_M=4096|fwd bf16 12288" "s32m2k|$R=fp32 LNTUNE_SWEEP_M=2112|fwd fp16 12288" \
  "ln3k2|LNTUNE_SWEEP_M=2112|fwd bf16 3072" "ln3k4|LNTUNE_SWEEP_M=4096|fwd bf16 3072" "ln3k4h|LNTUNE_SWEEP_M=4096|fwd fp16 3072" "ln3k6|LNTUNE_SWEEP_M=6336|fwd bf16 3072" \
  "ln1k42|LNTUNE_SWEEP_M=4224|fwd bf16 1024" "ln1k6|LNTUNE_SWEEP_M=6336|fwd bf16 1024" \
  "ln16k42|LNTUNE_SWEEP_M=4225|fwd bf16 16384" "ln16k6|LNTUNE_SWEEP_M=6000|fwd bf16 16384" "ln16k6h|LNTUNE_SWEEP_M=6336|fwd fp16 16384" "ln16k8|LNTUNE_SWEEP_M=8192|fwd bf16 16384" \
  "dln1a|$R=1 LNTUNE_SWEEP_M=1|fwd bf16 8192" "dln1b|$R=1 LNTUNE_SWEEP_M=1|fwd bf16 12288" "dln1c|$R=1 LNTUNE_SWEEP_M=1|fwd bf16 16384" \
  "dln64|$R=1 LNTUNE_SWEEP_M=64|fwd fp16 12288" "dln200|$R=1 LNTUNE_SWEEP_M=200|fwd bf16 12288" \
  "drms1a|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=1|fwd bf16 8192" "drms1b|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=1|fwd bf16 12288" \
  "drms64|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=64|fwd fp16 12288" "drms200|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=200|fwd bf16 16384" \
  "drms32a|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=1|fwd fp32 16384" "drms32b|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=64|fwd fp32 8192"
s sweeps
# (In the call these lines read `$R=fp32 sw ...`, which bash runs as a
# command: the add + RMSNorm and add + LayerNorm sweeps did not run; fixed
# here and run in call 3.)
# add + RMSNorm beside an fp32 stream at 12288 (no rule measured), and the
# 16-bit forward at M = 4096 of 1536 and 2048 columns.
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=fp32 sw addrms12k_f32 50 fwd bf16 12288
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=4096 sw addrms12k_f32_m4k 40 fwd bf16 12288
LNTUNE_SWEEP_M=4096 sw fwd_m4k 40 fwd bf16 1536 8192
LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_RESIDUAL=1 sw addln_m4k 50 fwd bf16 1024 2048 4096
s done
