#!/usr/bin/env bash
# Call 3: s30b = the staged backward on main with the 32-byte copy fix and
# the training-size default for staged rows (space.cpp, staged_rows). GPU
# suites (gpu_norms_test's new no-residual VariantSpace cases stage rows with
# 32-, 16-, 8- and 4-byte copies), then alone on the GPU: s30s (staged, the
# old defaults) against s30b, each its own process, two rounds, at M = 4096
# and at the middle Ms whose default the rule changes; every config of fp32
# N = 2048 at M = 4096; the host table against PyTorch.
set -uo pipefail
P=$PWD/.devbuild/s30s
D=$PWD/.devbuild/s30b
O=${OUT:-/tmp}
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "suites"
bash bench/gpu_suites.sh $D call3
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s "A/B defaults"
for round in 1 2; do
  for B in $P $D; do
    tag=$(basename $B)
    for m in 4096 512 128 32; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $B/lntune_sweep bwd bf16 1024 2048 | sed "s/^/$tag r$round m$m /"
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $B/lntune_sweep bwd fp32 1024 | sed "s/^/$tag r$round m$m /"
    done
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $B/lntune_sweep bwd fp16 1536 | sed "s/^/$tag r$round m4096 /"
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm $B/lntune_sweep bwd bf16 1024 2048 | sed "s/^/$tag r$round m4096rms /"
  done
done > $O/ab_defaults_call3.log 2>&1
grep -E " bwd " $O/ab_defaults_call3.log | awk '{print $1, $2, $3, $5, $6, $9, $10, $13}' | sort -k3,3 -k4,4 -k5,5V -k1,1 -k2,2
s "train every fp32 2048"
LNTUNE_SWEEP_EVERY=1 timeout 150 $D/lntune_sweep train fp32 2048 > $O/train_every_fp32_2048_call3.log 2>&1
grep -E "^train" $O/train_every_fp32_2048_call3.log | cut -c1-300
awk '/% of copy/ {print $(NF-4), $0}' $O/train_every_fp32_2048_call3.log | sort -n | head -6 | cut -c1-110
s "host table"
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
timeout 300 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host_call3.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results_call3.md 2>/dev/null
grep -E "^\| (1|32|256|4096) \|" $O/host_results_call3.md | head -30
s done
