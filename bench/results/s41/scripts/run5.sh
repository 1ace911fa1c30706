#!/usr/bin/env bash
# Call 5 (session 41). s41r = main at 48f0321: s41q with the 16-bit forward
# of more than 128K columns over the gap clusters of its 16384-column slabs
# with the slabs in shared memory (8 warps, one wave) and RMSNorm's fp32
# forward keeping its 16384-column slabs in clusters of 2 at 3 slabs of
# 8192. A/B s41q -> s41r (two rounds); every config of the 16-bit forward at
# 70000-110000 (the slabs in shared memory over gap clusters now in the
# space); compute-sanitizer (memcheck, racecheck, synccheck) on the forward
# and backward at N = 150000; main's GPU suites.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab5 2 $B/s41q $B/s41r -- \
  "fwd||fwd bf16 140000 150000 200000" "fwd||fwd fp16 150000 200000 230000" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 150000 200000" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp32 20000"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s41r
s "sweep (s41r)"
LNTUNE_SWEEP_EVERY=1 timeout 100 $B/s41r/lntune_sweep fwd bf16 70000 90000 110000 > $O/sw_fwd16_mid.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_fwd16_mid.log 4
s "sanitizers"
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5 $B/s41r/gpu_norms_test \
    --gtest_filter='*M5_N150000*:*SmemForwardExactness*' --gtest_brief=1 > $O/san_$tool.log 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/san_$tool.log | head -3
done
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s41r s41r; echo "suites rc=$?"
s done
