#!/usr/bin/env bash
# Call 2 (session 35, H200). m35 = main (1d24178). Every config, for rules:
# the fused fp32 backward (call 1: its default 70.5% at N = 4096 and 88.1% at
# 1024, the space's best 97.7 / 98.0%, 8 columns a thread) at more N, both
# norms; the long 16-bit rows (forward persistent or not; backward stages
# and clusters) at N between those of call 1, and fp16.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/m35
S=$B/m35/lntune_sweep
s "every config"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 timeout 80 $S bwd fp32 256 512 2048 8192 > $O/every_addln32_call2.log 2>&1; echo "addln32 rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm timeout 80 $S bwd fp32 1024 4096 8192 > $O/every_addrms32_call2.log 2>&1; echo "addrms32 rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 90 $S fwd fp16 16384 65536 > $O/every_fwd16_call2.log 2>&1; echo "fwd16 rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 90 $S fwd bf16 32768 131072 > $O/every_fwdbf_call2.log 2>&1; echo "fwdbf rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 60 $S fwd fp32 65536 > $O/every_fwd32_call2.log 2>&1; echo "fwd32 rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 100 $S bwd bf16 32768 131072 > $O/every_bwdbf_call2.log 2>&1; echo "bwdbf rc=$?"
LNTUNE_SWEEP_EVERY=1 timeout 60 $S bwd fp16 262144 > $O/every_bwd16_call2.log 2>&1; echo "bwd16 rc=$?"
grep -hE "default" $O/every_*_call2.log
s done
