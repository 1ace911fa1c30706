#!/usr/bin/env bash
# Call 9 (session 38). Every forward config at N = 256 and 512 (16-bit, x =
# 512 MiB) with lntune_sweep's random inputs: the Python bench times the
# default at 95% of copy (target 97), lntune_sweep with constant inputs
# measured 96.3-97.0 (session 34).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38g
LNTUNE_SWEEP_EVERY=1 timeout 100 $B/s38g/lntune_sweep fwd bf16 256 512 > $O/every_fwd_call9.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/every_fwd_call9.log 6
s done
