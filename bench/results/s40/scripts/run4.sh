#!/usr/bin/env bash
# Call 4 (session 40). s40e = s40d with clusters of other than a power of
# two in the wide kernels (gen::wide_clusters: as many 8192- or 16384-column
# slabs as a row of more than 65536 columns needs, the last partial, where
# no power of two of CTAs leaves every CTA columns; call 3 timed bf16's
# backward at N = 100000 at 20.5% of copy, every config a tile kernel), and
# defaults there. First the tests of the new configs; then A/B against s40d
# (two rounds); then every config at 100000 and 200000.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40e
s "tests"
timeout 200 $B/s40e/gpu_norms_test --gtest_filter='*N100000*:*N200000*:SmemForwardExactness.*' > $O/tests_call4.log 2>&1; echo "norms rc=$?"
grep -E "smem fwd|exact|offset|FAILED|Failure|PASSED" $O/tests_call4.log | head -20
LNTUNE_TEST_WIDE_STRIDE=2 timeout 200 $B/s40e/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*' > $O/gputests_call4.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide |FAILED|Failure|PASSED" $O/gputests_call4.log | head
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab4 2 $B/s40d $B/s40e -- \
  "fwd||fwd bf16 100000 200000" "fwd||fwd fp32 100000 200000" \
  "bwd||bwd bf16 100000 200000" "bwd||bwd fp32 100000 200000" "rmsb|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 200000"
s "sweeps"
LNTUNE_SWEEP_EVERY=1 $B/s40e/lntune_sweep fwd bf16 100000 200000 > $O/sw_gap_fwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_gap_fwd.log 5
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 $B/s40e/lntune_sweep bwd bf16 100000 200000 > $O/sw_gap_bwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_gap_bwd.log 5
s done
