#!/usr/bin/env bash
# Call 4 (session 36, H200). s36d = the clusters-of-4 forward only at
# 61441-65536 columns (LayerNorm). A/B s36b -> s36d at and below 65536,
# then every config at 131072-262144 now that persistent cluster grids are
# fitted (grids of 49 clusters of 8 / 16 ran a second wave before).
source bench/gpu_call.sh
s "A/B s36b -> s36d"
timeout 200 bash bench/gpu_ab.sh ab_call4 2 $B/s36b $B/s36d -- \
  "fwd||fwd bf16 65536 63488 61448" "fwd16||fwd fp16 65536" "ctl||fwd bf16 57344"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36d
S=$B/s36d/lntune_sweep
s "every config, fitted grids"
LNTUNE_SWEEP_EVERY=1 timeout 100 $S fwd bf16 131072 262144 > $O/every_fwd16_call4.log 2>&1; echo "fwd16 rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 100 $S bwd bf16 262144 > $O/every_bwd16_call4.log 2>&1; echo "bwd16 rc=$?"
grep -hE "default" $O/every_*_call4.log
s done
