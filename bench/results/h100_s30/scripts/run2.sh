#!/usr/bin/env bash
# Call 2: the staged backward (s30s = a63daec on main): every bwd_dx config at
# M = 4096 (train: the dx kernel and bwd_dwdb together, and bwd_dwdb alone),
# which configs stage their rows (static shared memory: 2 stages of x and dy
# within 47 KB) and which win now; and every config at M = 32, N = 1024.
set -uo pipefail
D=$PWD/.devbuild/s30s
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
for c in "bf16 1024" "bf16 2048" "fp32 1024" "bf16 4096"; do
  s "train every $c"
  LNTUNE_SWEEP_EVERY=1 timeout 150 $D/lntune_sweep train $c > /tmp/t.log 2>&1
  cp /tmp/t.log $O/train_every_$(echo $c | tr ' ' _)_call2.log
  grep -E "^train" /tmp/t.log | cut -c1-300 | head -4
  grep "% of copy" /tmp/t.log | sort -k7 -n | tail -5
done
for c in "bf16 1024" "fp32 1024"; do
  s "bwd every M=32 $c"
  LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_M=32 timeout 120 $D/lntune_sweep bwd $c > /tmp/t.log 2>&1
  cp /tmp/t.log $O/bwd_every_m32_$(echo $c | tr ' ' _)_call2.log
  grep -E " bwd " /tmp/t.log | cut -c1-300 | head -3
  grep -v " bwd " /tmp/t.log | grep " us" | sort -t'|' -k1 | head -3
done
s done
