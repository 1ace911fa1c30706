#!/usr/bin/env bash
# A device call for fwd-fused-12288-ln-1024.patch (bench/experiments/README.md):
# its Variants against the float64 reference with memcheck, then the
# defaults it changes A/B'd against main's, two rounds, with neighbours
# that must stay level.
#   OUT=$OUT bash bench/experiments/run-fwd-fused-12288-ln-1024.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
source bench/gpu_call.sh
main=${1:?usage: run-fwd-fused-12288-ln-1024.sh MAIN PATCHED} patched=${2:?usage: run-fwd-fused-12288-ln-1024.sh MAIN PATCHED}
use $patched
s cases
cases 120 '*Variants*M2201_N12288*:*Variants*resfp16_M3001_N12288*:*Variants*M4001_N1024_pad8*' '*Variants*M2201_N12288*:*Variants*M4001_N1024_pad8*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 12288" "addlnh|LNTUNE_SWEEP_RESIDUAL=1|fwd fp16 12288" \
  "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 12288" \
  "addln4k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|fwd bf16 12288" "addrms4k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|fwd bf16 12288" \
  "addln32|LNTUNE_SWEEP_RESIDUAL=fp32|fwd bf16 12288" \
  "ln1k|LNTUNE_SWEEP_M=2112|fwd bf16 1024" "ln1k3|LNTUNE_SWEEP_M=3000|fwd bf16 1024" "ln1k4|LNTUNE_SWEEP_M=4096|fwd bf16 1024" "ln1k4h|LNTUNE_SWEEP_M=4096|fwd fp16 1024" \
  "ln1k6|LNTUNE_SWEEP_M=6336|fwd bf16 1024" "ln1k8|LNTUNE_SWEEP_M=8192|fwd bf16 1024" "ln1kbw||fwd bf16 1024"
s done
