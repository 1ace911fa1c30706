#!/usr/bin/env bash
# Call 3 (session 49). s49c: the finish by warps at 16 rows a lane (s49b),
# past 256 partial rows only in grids of up to two CTAs a SM
# (rt::finish_path), and the 16-bit LayerNorm backward of 513-1024 columns
# at training sizes in two CTAs a SM of 4 warps, 2 rows (space.cpp). Its
# cases and memcheck, then the defaults A/B'd against s48c (main before the
# session) wherever the path or the config may change.
source bench/gpu_call.sh
use s49c
s cases
cases 170 '*VariantSpace*N1000_bwd_dx:*VariantSpace*N2002_bwd_dx' '*VariantSpace*v0_N1000_bwd_dx'
timeout 150 $D/gpu_test --gtest_filter='Gpu.*Finish*:Gpu.EverySearchSpaceConfigIsCorrect:Gpu.BackwardIsBitwise*:Gpu.DwdbRowSplits*' > $O/gpu_test_finish.log 2>&1; echo "gpu_test rc=$?"
grep -hE "configs checked|FAILED|PASSED|Failure" $O/gpu_test_finish.log | head
s defaults
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s48c $B/s49c -- \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 512 768 1024 2048" "m4kh|LNTUNE_SWEEP_M=4096|bwd fp16 1024" \
  "m4kf|LNTUNE_SWEEP_M=4096|bwd fp32 512 1024 2048" \
  "rms4k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048" \
  "res4k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd bf16 1024" \
  "m2k|LNTUNE_SWEEP_M=2112|bwd bf16 1024" "m6k|LNTUNE_SWEEP_M=6336|bwd bf16 1024" \
  "m16k|LNTUNE_SWEEP_M=16384|bwd bf16 1024" "m1k|LNTUNE_SWEEP_M=1024|bwd bf16 256 1024" "m1kf|LNTUNE_SWEEP_M=1024|bwd fp32 1024" \
  "m256|LNTUNE_SWEEP_M=256|bwd bf16 1024 4096" "m32|LNTUNE_SWEEP_M=32|bwd bf16 1024 8192" \
  "bw||bwd bf16 256 1024" "bwf||bwd fp32 256 1024"
s done
