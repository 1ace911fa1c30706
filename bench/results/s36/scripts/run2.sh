#!/usr/bin/env bash
# Call 2 (session 36, H200). s36b = 9db88de: persistent cluster grids fitted
# to the driver's co-resident count; default plans keyed by M. The new GPU
# tests first, then the GPU suites, then the wide configs at 65536-131072
# (clusters of 4 now run 30 clusters, not 33).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36b
S=$B/s36b/lntune_sweep
s "new tests"
timeout 120 $B/s36b/gpu_test --gtest_filter='Gpu.ClusterGridsFitWhatRunsAtOnce:Gpu.PlansFollow*' > $O/new_tests_call2.log 2>&1; echo "new rc=$?"
grep -hE "clusters \]|OK \]|FAILED|Failure" $O/new_tests_call2.log | head -20
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s36b call2
s "wide configs"
LNTUNE_SWEEP_WIDE=1 timeout 100 $S bwd bf16 65536 > $O/wide_bwd_call2.log 2>&1; echo "wide bwd rc=$?"
LNTUNE_SWEEP_WIDE=1 timeout 100 $S fwd bf16 65536 131072 > $O/wide_fwd_call2.log 2>&1; echo "wide fwd rc=$?"
grep -h "^   wide\|default" $O/wide_*_call2.log | sort -t'%' -k1 | tail -40
s done
