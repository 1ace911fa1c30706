#!/usr/bin/env bash
# Call 5 (session 34, H200). f34 = d1e68fd. Every config where the default
# heuristic's bandwidth table (call 4) is furthest below the copy: the fused
# 16-bit backward (add + LayerNorm 72-83% at N = 1024-8192, add + RMSNorm
# 77-80%), the 16-bit LayerNorm backward at 16384 (85%).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f34
s "every config"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 150 $B/f34/lntune_sweep bwd bf16 1024 4096 8192 > $O/every_addln_call5.log 2>&1; echo "addln rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 120 $B/f34/lntune_sweep bwd bf16 1024 4096 > $O/every_addrms_call5.log 2>&1; echo "addrms rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 100 $B/f34/lntune_sweep bwd bf16 16384 > $O/every_bwd16k_call5.log 2>&1; echo "bwd16k rc=$?"
grep -hE "default" $O/every_*_call5.log
s done
