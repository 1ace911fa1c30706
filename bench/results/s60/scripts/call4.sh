#!/usr/bin/env bash
# Call 4 (session 60). s60b = main after training-rules-2; s60c = s60b +
# (1) LayerNorm's single-tile forward in whole warps with one barrier round a
# row (the threads' Welford parts merged, row_welford) where the mean and
# then the variance took two; (2) rules-3 (EXPERIMENT markers in
# generator/space.cpp): 16-bit RMSNorm fwd from 12289 on 4096 tiles w16,
# 16-bit RMSNorm bwd 3073-3583 on the 4096 tile w16, 16-bit bwd 8193-10239
# (not 9216) over the even split at 2 stages; (3) the upload fix.
# tuner_gpu_test on s60c (the raced DeviceCheck test), then the A/B, two
# rounds.
source bench/gpu_call.sh
use s60c
s tuner_gpu_test
timeout 120 $D/tuner_gpu_test > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"; tail -n 3 $O/tuner_gpu_test.log
s ab
c8704='LNTUNE_SWEEP_CONFIG=block_size=10240,num_warps=8,rows_per_cta=1,group_size_m=0;block_size=10240,num_warps=16,rows_per_cta=1,group_size_m=0;block_size=12288,num_warps=16,rows_per_cta=1,group_size_m=0;block_size=9216,num_warps=9,rows_per_cta=1,group_size_m=0'
c12800='LNTUNE_SWEEP_CONFIG=block_size=14336,num_warps=8,rows_per_cta=1,group_size_m=0;block_size=14336,num_warps=16,rows_per_cta=1,group_size_m=0;block_size=16384,num_warps=16,rows_per_cta=1,group_size_m=0'
c8704b='LNTUNE_SWEEP_CONFIG=block_size=6144,num_warps=8,rows_per_cta=2,group_size_m=132,cluster_size=2;block_size=6144,num_warps=8,rows_per_cta=3,group_size_m=132,cluster_size=2;block_size=6144,num_warps=8,rows_per_cta=4,group_size_m=132,cluster_size=2'
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s60b $B/s60c -- \
  "f4096|LNTUNE_SWEEP_M=4096|fwd bf16 2048 4096 8192 8704 10752 12800 16384" \
  "f4096h|LNTUNE_SWEEP_M=4096|fwd fp16 1024 8704 12288" \
  "f4096f|LNTUNE_SWEEP_M=4096|fwd fp32 2560 4096 8192 16384" \
  "fbig||fwd bf16 1024 4096 16384" "fbigf||fwd fp32 1024 4096" "fbigh||fwd fp16 2048" \
  "f4096a|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 4096 8704" \
  "fbiga|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 4096" \
  "f16k|LNTUNE_SWEEP_M=16384|fwd bf16 8704" \
  "c8704|LNTUNE_SWEEP_M=4096 $c8704|fwd bf16 8704" \
  "c12800|LNTUNE_SWEEP_M=4096 $c12800|fwd bf16 12800" \
  "r4096r|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 12544 12800" \
  "r4096rh|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 12800" \
  "r2200r|LNTUNE_SWEEP_M=2200 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 12800" \
  "rb4096r|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 3200 3328 8704" \
  "rb4096rh|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd fp16 3200" \
  "rb6000r|LNTUNE_SWEEP_M=6000 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 3200" \
  "rb4096|LNTUNE_SWEEP_M=4096|bwd bf16 8704 9728" \
  "rb4096h|LNTUNE_SWEEP_M=4096|bwd fp16 8704 9728" \
  "rb2200|LNTUNE_SWEEP_M=2200|bwd bf16 8704" \
  "cb8704h|LNTUNE_SWEEP_M=4096 $c8704b|bwd fp16 8704"
s done
