#!/usr/bin/env bash
# Call 3 (session 40). s40d = s40c with call 2's defaults: fp32 forward of
# more than 128K columns at 3 stages; RMSNorm's 16-bit forward at 65536
# (clusters of 4, 16 warps, 3 stages) and 64K-128K (as LayerNorm's:
# clusters of 8, 4 stages); the 16-bit backward's rule of two CTAs a SM up
# to 131072 columns (clusters of 16 over 8192-column slabs, no residual).
# A/B against s40c, two rounds; every config at N = 100000 (no rule has a
# full slab there); then the GPU suites on s40d.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab3 2 $B/s40c $B/s40d -- \
  "fwd||fwd fp32 262144" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp32 262144" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 65536 131072" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 65536 131072" \
  "bwd||bwd bf16 131072" "bwd||bwd fp16 131072" "rmsb|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 131072"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40d
s "sweeps N=100000"
LNTUNE_SWEEP_EVERY=1 $B/s40d/lntune_sweep fwd bf16 100000 > $O/sw_100k_fwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_100k_fwd.log 5
LNTUNE_SWEEP_EVERY=1 $B/s40d/lntune_sweep bwd bf16 100000 > $O/sw_100k_bwd.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_100k_bwd.log 5
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s40d s40d; echo "suites rc=$?"
s done
