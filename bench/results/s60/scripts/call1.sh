#!/usr/bin/env bash
# Call 1 (session 60; was bench/experiments/run-training-rules-2.sh): the
# A/B of training-rules-2.patch (landed; bench/experiments/README.md):
# eight more defaults from session 58's cold tune at M = 4096
# (bench/results/s58/call4/cold.log, the winner 1.04-1.27x over the
# default). The patched build's new Variants cases (every Variants case
# whose N the rules name) beside memcheck on them, then the A/B against
# main, two rounds, inside the rules' ranges and at their edges.
#   OUT=$OUT bash bench/results/s60/scripts/call1.sh MAIN PATCHED
# MAIN, PATCHED: carried builds under .devbuild (scripts/stage.sh NAME).
# About four minutes of device time.
source bench/gpu_call.sh
[ $# = 2 ] || { echo "usage: call1.sh MAIN PATCHED" >&2; exit 2; }
new='*Variants*N15000_pad8:*Variants*N13313:*Variants*N4609:*Variants*N17000_pad8:*Variants*M3001_N4096_pad8:*Variants*N8704:*Variants*M3001_N9216_pad8:*Variants*M4096_N256:*Variants*N250_pad8'
patch_ab "$1" "$2" "$new" "$new" \
  "f4096|LNTUNE_SWEEP_M=4096|fwd bf16 14848 15360 15872 16384" \
  "f4096h|LNTUNE_SWEEP_M=4096|fwd fp16 15360" \
  "f2200|LNTUNE_SWEEP_M=2200|fwd bf16 15360" \
  "f4096r|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 12800 13312 13824 14336 14848 15360" \
  "f4096rh|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 13824" \
  "f2200r|LNTUNE_SWEEP_M=2200 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 13824" \
  "f4096f|LNTUNE_SWEEP_M=4096|fwd fp32 4608 5120 5632 6144" \
  "f2200f|LNTUNE_SWEEP_M=2200|fwd fp32 4608 5632" \
  "f4096a|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 16896 18432 20480" \
  "f2200a|LNTUNE_SWEEP_M=2200 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 18432" \
  "b4096r|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 4096" \
  "b4096rh|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd fp16 4096" \
  "b6000r|LNTUNE_SWEEP_M=6000 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 4096" \
  "b4096a|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 8704 9216" \
  "b2200a|LNTUNE_SWEEP_M=2200 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 8704" \
  "b4096s|LNTUNE_SWEEP_M=4096|bwd bf16 256" "b4096sf|LNTUNE_SWEEP_M=4096|bwd fp32 256" \
  "b16384s|LNTUNE_SWEEP_M=16384|bwd bf16 256" "bigs||bwd bf16 256"
