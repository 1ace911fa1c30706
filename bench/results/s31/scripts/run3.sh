#!/usr/bin/env bash
# Call 3: s31d = main + the wide backward's dz prefetched into L2 by the copy
# engine beside dy (evict_last) and read in pass B with evict_first, where dy
# is not staged (fp32 rows of 256K columns). Alone on the GPU: s31 against
# s31d, fp32 N = 262144 (x = 512 MiB), add + LayerNorm, add + RMSNorm,
# LayerNorm (a control: unchanged), bf16 add + LayerNorm (dy staged: the
# pass B code moved); ncu's DRAM bytes of the fused kernel on both; then the
# suites and sanitizers of s31d.
set -uo pipefail
B=$PWD/.devbuild
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "A/B"
bash bench/gpu_ab.sh ab_call3 2 $B/s31 $B/s31d -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 262144" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "ln||bwd fp32 262144" \
  "addln16|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 262144 65536"
s "ncu DRAM bytes"
for d in s31 s31d; do
  for op in layernorm rmsnorm; do
    LD_LIBRARY_PATH=/usr/local/cuda/lib64 LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=$op timeout 100 \
      ncu --cache-control all --clock-control none -k regex:bwd_dx --launch-skip 2 --launch-count 1 \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum $B/$d/lntune_sweep bwd fp32 262144 2>&1 \
      | grep -E "dram__|lts__|gpu__time" | sed "s/^/$d $op /"
  done
done
s "suites, and the sanitizers on gpu_test's wide backward cases beside them"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s31d LNTUNE_CACHE=off
(for tool in memcheck racecheck synccheck; do
  timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 $B/s31d/gpu_test --gtest_filter='Gpu.WideBackward*' --gtest_brief=1 > /tmp/san_$tool.log 2>&1
  echo "$tool gpu_test Wide exit $?: $(grep -E 'SUMMARY|PASSED|FAILED' /tmp/san_$tool.log | tr '\n' ' ')"
done > /tmp/san.txt 2>&1) &
bash bench/gpu_suites.sh $B/s31d call3
wait
cat /tmp/san.txt
s done
