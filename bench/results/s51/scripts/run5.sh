#!/usr/bin/env bash
# Call 5 (session 51). The decode forward rule (s51e: call 4's bests as
# H200 defaults) against main (s51d = 42a88f0): its Variants against the
# float64 reference with memcheck, then the defaults A/B'd, two rounds,
# with controls outside the rule (M = 9 at 32768, M = 300 at 16384, 4096).
source bench/gpu_call.sh
use s51e
s cases
cases 120 '*Variants*M5_N12000*:*Variants*M1_N9001*:*Variants*M7_N16000*:*Variants*M200_N16384*:*Variants*M3_N65536*:*Variants*M8_N32768*' '*Variants*M5_N12000*:*Variants*M3_N65536*:*Variants*M7_N16000*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s51d $B/s51e -- \
  "m1|LNTUNE_SWEEP_M=1|fwd bf16 4096 8192 10000 12288 16384 32768 65536" \
  "m8|LNTUNE_SWEEP_M=8|fwd bf16 8192 12288 16384 32768 65536" \
  "m9|LNTUNE_SWEEP_M=9|fwd bf16 32768" \
  "m64|LNTUNE_SWEEP_M=64|fwd bf16 8192 16384" "m132|LNTUNE_SWEEP_M=132|fwd bf16 16384" \
  "m200|LNTUNE_SWEEP_M=200|fwd bf16 16384" "m256|LNTUNE_SWEEP_M=256|fwd bf16 16384" "m300|LNTUNE_SWEEP_M=300|fwd bf16 16384" \
  "f32|LNTUNE_SWEEP_M=1|fwd fp32 8192 16384" "h8|LNTUNE_SWEEP_M=8|fwd fp16 16384 32768" \
  "addrms|LNTUNE_SWEEP_M=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 16384"
s done
