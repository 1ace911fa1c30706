#!/usr/bin/env bash
# Call 4 (session 39). s39d = main (one-pass statistics in clusters of 16,
# the backward's weight slab by 16-byte pieces). Every wide backward config
# with an fp32 weight beside bf16 rows (the layout moved that default 80 ->
# 87% at N = 16384, 70 -> 76% at 65536: is another config faster now?), and
# every wide forward config at 262144 columns (fp16, bf16) with the one-pass
# statistics.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39d
S=$B/s39d/lntune_sweep
s "bwd, fp32 weight"
LNTUNE_SWEEP_W=fp32 LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 280 $S bwd bf16 16384 65536 > $O/bwd_w32_call4.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/bwd_w32_call4.log 6
s "fwd 262144"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 200 $S fwd fp16 262144 > $O/fwd256k_call4.log 2>&1; echo "rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 200 $S fwd bf16 262144 >> $O/fwd256k_call4.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/fwd256k_call4.log 6
s done
