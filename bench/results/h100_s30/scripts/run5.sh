#!/usr/bin/env bash
# Call 5: s30e = the staged rows in dynamic shared memory (up to 96 KB, so
# also fp32 N = 4096 and 16-bit N = 8192 rows, and more rows per CTA), never
# run before; s30d = main before it (static, up to 47 KB). GPU suites of
# s30e, then alone on the GPU: the default backward of both, each its own
# process, two rounds, M = 4096 and x = 512 MiB; every config of bf16
# N = 1024 at M = 4096 (train) on s30e.
set -uo pipefail
P=$PWD/.devbuild/s30d
D=$PWD/.devbuild/s30e
O=${OUT:-/tmp}
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "suites"
bash bench/gpu_suites.sh $D call5
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s "A/B defaults"
for round in 1 2; do
  for B in $P $D; do
    tag=$(basename $B)
    for dt in bf16 fp32; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $B/lntune_sweep bwd $dt 1024 2048 4096 8192 16384 | sed "s/^/$tag r$round m4096 /"
      LNTUNE_SWEEP_CONFIG=default $B/lntune_sweep bwd $dt 1024 4096 8192 16384 | sed "s/^/$tag r$round big /"
    done
  done
done > $O/ab_dynamic_call5.log 2>&1
grep -E " bwd " $O/ab_dynamic_call5.log | awk '{print $1, $2, $3, $5, $6, $9, $10, $13}' | sort -k3,3 -k4,4 -k5,5V -k1,1 -k2,2
s "train every bf16 1024"
LNTUNE_SWEEP_EVERY=1 timeout 150 $D/lntune_sweep train bf16 1024 > $O/train_every_bf16_1024_call5.log 2>&1
grep -E "^train" $O/train_every_bf16_1024_call5.log | cut -c1-300
awk '/% of copy/ {print $(NF-4), $0}' $O/train_every_bf16_1024_call5.log | sort -n | head -6 | cut -c1-110
s done
