#!/usr/bin/env bash
# A device call for bench/probes/split_row_fwd_probe.cu (session 55, not yet
# run): rows of 262144 columns split over the CTAs of a cooperative grid that
# exchange their slab statistics through global memory (no cluster, so no
# GPC limit: the library's clusters of 16 run 7 at once, 112 of 132 SMs),
# bf16 and fp32, against the copy in its process; then the library's default
# at the same shapes in `lntune_sweep` (against its own copy) and every
# config of its space at bf16 262144, for the comparison.
#   nvcc -O3 -arch=sm_90 -std=c++17 -o .devbuild/probe/split_row_fwd_probe bench/probes/split_row_fwd_probe.cu
#   OUT=$OUT bash bench/experiments/run-split-row-probe.sh MAIN
# MAIN: a carried build under .devbuild (scripts/stage.sh NAME); carry
# .devbuild/probe too. About two minutes of device time.
source bench/gpu_call.sh
main=${1:?usage: run-split-row-probe.sh MAIN}
use $main
s probe
timeout 240 $B/probe/split_row_fwd_probe > $O/split_probe.log 2>&1; echo "probe rc=$?"
cat $O/split_probe.log
s library
sw lib_bf16 90 fwd bf16 262144
LNTUNE_SWEEP_CONFIG=default timeout 60 $S fwd fp32 262144 2>&1 | tail -2
s done
