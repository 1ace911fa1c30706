#!/usr/bin/env bash
# Call 2 (session 40). s40c = main with call 1's winners: the one-pass
# statistics for every LayerNorm full slab in clusters of 16 of up to 32
# columns a thread (fp32 rows of 256K columns), the lane sums in the fused
# LayerNorm backward (16-bit, clusters of 16, 3 stages). A/B against s40m,
# two rounds; then every config (sweeps) where RMSNorm's defaults differ from
# LayerNorm's (bf16 65536 and 131072, forward and backward) and fp32 rows of
# 256K columns.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab2 2 $B/s40m $B/s40c -- \
  "fwd||fwd fp32 262144" "res|LNTUNE_SWEEP_RESIDUAL=1|fwd fp32 262144" \
  "resb|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 262144" "resb|LNTUNE_SWEEP_RESIDUAL=1|bwd fp16 262144"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40c
S=$B/s40c/lntune_sweep
s "sweeps"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_OP=rmsnorm $S fwd bf16 65536 131072 > $O/sw_rms_fwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_rms_fwd.log 6
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 LNTUNE_SWEEP_OP=rmsnorm $S bwd bf16 65536 131072 262144 > $O/sw_rms_bwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_rms_bwd.log 6
LNTUNE_SWEEP_EVERY=1 $S fwd fp32 262144 > $O/sw_fp32_fwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_fp32_fwd.log 6
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 $S bwd fp32 262144 > $O/sw_fp32_bwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_fp32_bwd.log 6
s done
