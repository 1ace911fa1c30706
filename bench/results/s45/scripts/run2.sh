#!/usr/bin/env bash
# Call 2 (session 45). s45b = s45a with the register backward's rows staged
# in clusters too (each CTA its slab) and up to 192 KB of stages in CTAs of
# 512 threads or more (one a SM by their registers): fp32 8192 (plain and
# fused), 16-bit 16384 in clusters of 2 and 4. The defaults unchanged: the
# cases, then every config where new staged configs appear.
source bench/gpu_call.sh
use s45b
s "cases"
cases 140 '*v0_N12288_bwd*:*v1_N12288_bwd*:*v4_N4095_bwd*:*Variants*N20001*:*Variants*N4099*' '*v1_N12288_bwd*'
s "every config"
sw b16k 75 bwd bf16 16384
(export LNTUNE_SWEEP_RESIDUAL=1; sw addb16k 75 bwd bf16 16384)
(export LNTUNE_SWEEP_OP=rmsnorm; sw rmsb16k 75 bwd bf16 16384)
sw f8k 60 bwd fp32 8192
(export LNTUNE_SWEEP_RESIDUAL=1; sw addf8k 60 bwd fp32 8192)
(export LNTUNE_SWEEP_RESIDUAL=1; sw add12k 70 bwd bf16 12288)
s done
