#!/usr/bin/env bash
# Call 8 (session 36, H200). s36f. Every config of the add + RMSNorm bf16
# backward at 65536 (does clusters of 4 win there too?).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36f
S=$B/s36f/lntune_sweep
s "every config"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 80 $S bwd bf16 65536 > $O/every_addrms_bwd_call8.log 2>&1; echo "addrms rc=$?"
grep -hE "default" $O/every_*_call8.log
s done
