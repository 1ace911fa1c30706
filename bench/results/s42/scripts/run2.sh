#!/usr/bin/env bash
# Call 2 (session 42), s42a (main with call 1's script): every
# config at the holes call 1's scan found at hidden sizes that are not powers
# of two (forward bf16 2560-28672 at 83-88% of copy, backward fp32 5120
# 66.7%, 6144 79.4, bf16 18432 80, train bf16 M = 4096 2560 54.3, 5120
# 65.5); the fp32 forward at 36000-57000 (40000: w16 90.0 against the w8
# default's 84.8); the wide backward's fine split at more N (call 1: bf16
# 150000 46.9 -> 61.2, 180000 55.6 -> 70.8, fp32 150000 49.1 -> 85.7).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42a
S=$B/s42a/lntune_sweep
sw() { local tag=$1 t=$2; shift 2; LNTUNE_SWEEP_EVERY=1 timeout $t $S "$@" > $O/sw_$tag.log 2>&1; echo "$tag rc=$?"; python3 bench/sweep_top.py $O/sw_$tag.log 4; }
s "forward holes"
sw fwd16 90 fwd bf16 1536 2560 5120 12288 18432 20480 28672
sw fwd32 90 fwd fp32 18432 28672 36000 45000 50000 57000
s "backward holes"
sw bwd32 90 bwd fp32 5120 6144 18432
sw bwd16 90 bwd bf16 2560 5120 18432 20480
s "train holes"
LNTUNE_SWEEP_M=4096 sw train16 90 train bf16 2560 5120
s "wide backward sweeps"
export LNTUNE_SWEEP_WIDE=1
sw wbwd16 90 bwd bf16 135000 160000 170000 200000 220000 240000
sw wbwd32 90 bwd fp32 140000 160000 170000 190000 220000
s done
