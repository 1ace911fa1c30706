#!/usr/bin/env bash
# Call 4: s30d = 246c9ff (main: staged rows and their default, fp32 N = 2048
# included); s30c = s30d with rt::finish_fits letting the in-kernel dW/dB
# finish take up to 32 partial rows a row group (4 before), never committed:
# does finishing inside the dx kernel (cooperative) beat bwd_dwdb once P is
# a few hundred rows? gpu_test on s30c first (its cooperative cases then take
# the longer loops), then alone on the GPU: s30b (the rule without fp32
# N = 2048), s30d and s30c, each its own process, two rounds.
set -uo pipefail
B=$PWD/.devbuild/s30b
D=$PWD/.devbuild/s30d
C=$PWD/.devbuild/s30c
O=${OUT:-/tmp}
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "gpu_test s30c"
LD_LIBRARY_PATH=/usr/local/cuda/lib64:$C timeout 300 $C/gpu_test --gtest_brief=1 > $O/gpu_test_call4_s30c.log 2>&1; echo "rc=$?"
grep -E "PASSED|FAILED|\[ finish" $O/gpu_test_call4_s30c.log | head
s "A/B"
for round in 1 2; do
  for X in $B $D $C; do
    tag=$(basename $X)
    export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$X
    for m in 4096 1024; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $X/lntune_sweep bwd bf16 1024 2048 | sed "s/^/$tag r$round m$m /"
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $X/lntune_sweep bwd fp32 1024 2048 | sed "s/^/$tag r$round m$m /"
    done
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm $X/lntune_sweep bwd bf16 1024 | sed "s/^/$tag r$round m4096rms /"
  done
done > $O/ab_finish_call4.log 2>&1
grep -E " bwd " $O/ab_finish_call4.log | awk '{print $1, $2, $3, $5, $6, $9, $10, $13}' | sort -k3,3 -k4,4 -k5,5V -k1,1 -k2,2
s done
