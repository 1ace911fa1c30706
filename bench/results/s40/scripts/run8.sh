#!/usr/bin/env bash
# Call 8 (session 40; the device budget's last minutes). s40h = s40g with
# the wide forward's space taking the gap clusters from 16385 columns too.
# Every config: the 16-bit forward of 40000 and 50000 columns (default: the
# row's slabs in shared memory, clusters of 2) and the fp32 backward there
# (default: the cluster-split register kernel).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40h
S=$B/s40h/lntune_sweep
LNTUNE_SWEEP_EVERY=1 $S fwd bf16 40000 50000 > $O/sw_fwd_40k.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_fwd_40k.log 4
LNTUNE_SWEEP_EVERY=1 $S bwd fp32 40000 50000 > $O/sw_bwd32_40k.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_bwd32_40k.log 4
s done
