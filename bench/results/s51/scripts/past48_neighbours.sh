#!/usr/bin/env bash
# A device call for past48-neighbours.patch (bench/experiments/README.md):
# its two Variants against the float64 reference, memcheck, and the
# defaults it changes A/B'd against main's, two rounds (session 50's call
# 13, which found no device time left).
#   OUT=$OUT bash bench/results/s51/scripts/past48_neighbours.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
source bench/gpu_call.sh
main=${1:?usage: run-past48-neighbours.sh MAIN PATCHED} patched=${2:?usage: run-past48-neighbours.sh MAIN PATCHED}
use $patched
s cases
cases 60 '*Variants*M12000_N2000*:*Variants*rmsnorm_bf16_wbf16_WnoB_M16384_N2048*' '*Variants*M12000_N2000*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "res32|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=16384|bwd bf16 1024 2048" "res32m|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=8192|bwd bf16 1024 2048" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=16384|bwd bf16 2048 4096" "rmsm|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=8192|bwd bf16 2048 4096" \
  "res32big|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=16897|bwd bf16 1024" "plain|LNTUNE_SWEEP_M=16384|bwd bf16 2048"
s done
