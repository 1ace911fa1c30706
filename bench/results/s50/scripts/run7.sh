#!/usr/bin/env bash
# Call 7 (session 50). The backward past 48 rows a SM (s50h: call 6's
# configs as H200 defaults to 64 / 128 / 256 rows a SM by width) against
# main with the fp32 training rule (s50g): its cases against the float64
# reference (four new Variants), memcheck, the defaults A/B, two rounds,
# with the bandwidth regime and M = 65536 left alone.
source bench/gpu_call.sh
use s50h
s cases
cases 200 '*Variants*M16384_N1000*:*Variants*M12001*:*Variants*M9001_N2048*:*Variants*M20000*' '*Variants*M12001*:*Variants*M9001_N2048*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s50g $B/s50h -- \
  "m8k|LNTUNE_SWEEP_M=8192|bwd bf16 1024 2048 4096" "m8kf|LNTUNE_SWEEP_M=8448|bwd fp32 512 1024" \
  "m12k|LNTUNE_SWEEP_M=12288|bwd bf16 768 1024 2048 3000" "m16k|LNTUNE_SWEEP_M=16384|bwd bf16 768 1000 1024 2048 4096" \
  "m16kh|LNTUNE_SWEEP_M=16384|bwd fp16 1024" "m16kr|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=16384|bwd bf16 1024" \
  "m24k|LNTUNE_SWEEP_M=24576|bwd bf16 1024 4096" "m32k|LNTUNE_SWEEP_M=32768|bwd bf16 1024 4096" \
  "m64k|LNTUNE_SWEEP_M=65536|bwd bf16 1024 4096" "bw||bwd bf16 1024 4096"
s done
