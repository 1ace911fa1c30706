#!/usr/bin/env bash
# Call 1 (session 41). s41m = main at 2ee82e5 (session 40's end); s40h =
# the build of session 40's call 8, before the defaults that went in from
# sweeps alone (fp32 backward over gap clusters of 8192-column slabs at
# 16385-65536 columns, 16-bit LayerNorm forward of 32769-49152 columns over
# three 16384-column slabs) and the last-resort gap defaults with a residual
# (untimed). A/B s40h -> s41m, two rounds; then main's GPU suites (they hold
# shapes at N = 40000 never run on a GPU).
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab1 2 $B/s40h $B/s41m -- \
  "bwd||bwd fp32 40000 50000" "fwd||fwd bf16 40000 45000 49152" \
  "res|LNTUNE_SWEEP_RESIDUAL=1|fwd fp32 40000 100000" "res|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 40000" \
  "rres|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 40000"
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s41m s41m; echo "suites rc=$?"
s done
