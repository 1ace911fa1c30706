#!/usr/bin/env bash
# A device call for finish-two-ctas-bound.patch (bench/experiments/README.md):
# the finishing entries' correctness (every config at 1000 and 2002
# columns, gpu_test's finish and determinism tests, memcheck), then the
# defaults whose grid finishes in the kernel A/B'd against main's, two
# rounds, with neighbours that must stay level.
#   OUT=$OUT bash bench/results/s51/scripts/finish_two_ctas_bound.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
source bench/gpu_call.sh
main=${1:?usage: run-finish-two-ctas-bound.sh MAIN PATCHED} patched=${2:?usage: run-finish-two-ctas-bound.sh MAIN PATCHED}
use $patched
s cases
cases 170 '*VariantSpace*N1000_bwd_dx:*VariantSpace*N2002_bwd_dx:*Variants*M4096*' '*VariantSpace*v0_N1000_bwd_dx'
gtests 150 'Gpu.*Finish*:Gpu.BackwardIsBitwise*:Gpu.EverySearchSpaceConfigIsCorrect'
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/$main $B/$patched -- \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 512 768 1024 2048" "m4kh|LNTUNE_SWEEP_M=4096|bwd fp16 1024" \
  "m4kf|LNTUNE_SWEEP_M=4096|bwd fp32 512 1024" "rms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1024" \
  "res|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd bf16 1024" "res16k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16384|bwd bf16 1024" \
  "m1k|LNTUNE_SWEEP_M=1024|bwd bf16 256 1024" "bw||bwd bf16 1024"
s done
