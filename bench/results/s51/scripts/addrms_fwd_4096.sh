#!/usr/bin/env bash
# A device call for addrms-fwd-4096.patch (bench/experiments/README.md): the
# forward default it changes A/B'd against main's, two rounds, with the
# neighbours it must leave alone, then the fused Variants at 4096 columns.
#   OUT=$OUT bash bench/results/s51/scripts/addrms_fwd_4096.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
source bench/gpu_call.sh
main=${1:?usage: run-addrms-fwd-4096.sh MAIN PATCHED} patched=${2:?usage: run-addrms-fwd-4096.sh MAIN PATCHED}
use $patched
s cases
cases 120 '*Variants*rmsnorm_*_res*N4096*' '*Variants*rmsnorm_bf16_*_res*M33793_N4096*'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 4096" "addrmsh|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd fp16 4096" \
  "addrms64k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=34000|fwd bf16 4096" \
  "addrms16k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16384|fwd bf16 4096" \
  "addrms32|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=fp32|fwd bf16 4096" "addln|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 4096"
s done
