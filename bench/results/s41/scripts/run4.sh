#!/usr/bin/env bash
# Call 4 (session 41). s41q = s41p (main at e426ec5) with the rules from
# call 3's sweeps (fp32 forward over gap clusters of 8192-column slabs at
# 16385-65535 columns, four 16384-column slabs at 7; the 16-bit LayerNorm
# forward of 16385-24576 columns in one CTA's shared memory, three
# 16384-column slabs from 32769; the 16-bit backward in clusters of more
# than 8 at 3 stages, bf16 too) and the forward's slabs in shared memory
# over gap clusters in the space. Tests of those kernels, the A/B s41p ->
# s41q (two rounds), then every config of the forward at 150000-200000.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s41q
s "tests (s41q)"
timeout 150 $B/s41q/gpu_norms_test --gtest_filter='*SmemForward*N200000*:*N40000*' --gtest_brief=1 > $O/tests_q.log 2>&1; echo "norms rc=$?"
grep -E "smem fwd|PASSED|FAILED" $O/tests_q.log | head -8
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab4 2 $B/s41p $B/s41q -- \
  "fwd||fwd fp32 20000 36000 45000 57000" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp32 20000 36000 45000 57000" \
  "fwd||fwd bf16 20000 24000 34000 36000" "bwd||bwd bf16 150000 200000 230000 262144"
s "sweeps (s41q)"
S=$B/s41q/lntune_sweep
sw() { local tag=$1; shift; LNTUNE_SWEEP_EVERY=1 timeout 120 $S "$@" > $O/sw_$tag.log 2>&1; echo "$tag rc=$?"; python3 bench/sweep_top.py $O/sw_$tag.log 4; }
sw fwd16 fwd bf16 150000 200000
sw fwd32 fwd fp32 150000 200000
s done
