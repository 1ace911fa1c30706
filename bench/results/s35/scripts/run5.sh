#!/usr/bin/env bash
# Call 5 (session 35, H200). f35 = 8960fe9 (fast-memory defaults; the
# clusters-of-4 spares of f35b are reverted). Every config where RMSNorm and
# the fused forms are furthest below target on the H200 (s34 call 7's
# tables): long rows, both directions, 16-bit and fp32.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35
S=$B/f35/lntune_sweep
s "every config"
E() { local log=$1 t=$2; shift 2; env LNTUNE_SWEEP_EVERY=1 "$@" > $O/$log 2>&1; echo "$log rc=$?"; }
R=LNTUNE_SWEEP_OP=rmsnorm; A=LNTUNE_SWEEP_RESIDUAL=1
E every_rms_fwd_call5.log 0 $R timeout 70 $S fwd bf16 16384 65536 262144
E every_rms_bwd_call5.log 0 $R timeout 80 $S bwd bf16 16384 65536 262144
E every_rms_bwd32_call5.log 0 $R timeout 40 $S bwd fp32 262144
E every_addln_bwd_call5.log 0 $A timeout 80 $S bwd bf16 16384 65536 262144
E every_addrms_bwd_call5.log 0 $A $R timeout 80 $S bwd bf16 16384 65536 262144
E every_addln_bwd32_call5.log 0 $A timeout 60 $S bwd fp32 65536 262144
E every_addrms_bwd32_call5.log 0 $A $R timeout 60 $S bwd fp32 65536 262144
E every_add_fwd_call5.log 0 $A timeout 60 $S fwd bf16 65536 262144
E every_addrms_fwd32_call5.log 0 $A $R timeout 40 $S fwd fp32 16384
grep -hE "default" $O/every_*_call5.log
s done
