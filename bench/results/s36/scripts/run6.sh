#!/usr/bin/env bash
# Call 6 (session 36, H200). s36e. Every config, with persistent cluster
# grids now fitted, where the defaults are furthest below target: the fp32
# LayerNorm backward at 262144, the RMSNorm and add + LayerNorm bf16
# backward at 65536, the fp32 forward at 262144.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36e
S=$B/s36e/lntune_sweep
s "every config, fitted grids"
LNTUNE_SWEEP_EVERY=1 timeout 80 $S bwd fp32 262144 > $O/every_bwd32_call6.log 2>&1; echo "bwd32 rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_OP=rmsnorm timeout 80 $S bwd bf16 65536 > $O/every_rms_bwd_call6.log 2>&1; echo "rms rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 80 $S bwd bf16 65536 > $O/every_addln_bwd_call6.log 2>&1; echo "addln rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 80 $S fwd fp32 262144 > $O/every_fwd32_call6.log 2>&1; echo "fwd32 rc=$?"
grep -hE "default" $O/every_*_call6.log
s done
