#!/usr/bin/env bash
# Call 1: main (s31, 2387664: session 30's final review, never run on a GPU)
# against the two rebased WIP branches: s31s = wip/staged3 (three stages
# where they fit static shared memory), s31c = wip/cluster-partials (clusters
# of 4 CTAs sum their partial dW/dB rows through DSMEM), s31c1 = s31c with
# LNTUNE_REDUCE_CLUSTER=1 (its own baseline). First, alone on the GPU, the
# default backward of each build against its own copy, two rounds; then the
# new finishing-entry test on main and the GPU suites of both branches side
# by side.
set -uo pipefail
B=$PWD/.devbuild
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "A/B"
bash bench/gpu_ab.sh ab_call1 2 $B/s31 $B/s31s $B/s31c $B/s31c1 -- \
  "m4096|LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048 4096" \
  "m4096|LNTUNE_SWEEP_M=4096|bwd fp32 1024 2048" \
  "m4096rms|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1024 2048" \
  "big||bwd bf16 1024 4096"
s "finishing entry on main"
LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s31 LNTUNE_CACHE=off timeout 60 $B/s31/gpu_test --gtest_filter='*FinishingEntry*:*Unaligned*' --gtest_brief=1 2>&1 | tail -5
s "suites of both branches, side by side"
bash bench/gpu_suites.sh $B/s31s call1_s31s > /tmp/suites_s.txt 2>&1 &
bash bench/gpu_suites.sh $B/s31c call1_s31c > /tmp/suites_c.txt 2>&1 &
wait
echo "-- s31s"; cat /tmp/suites_s.txt; echo "-- s31c"; cat /tmp/suites_c.txt
s done
