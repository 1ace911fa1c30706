#!/usr/bin/env bash
# Call 5 (session 32, H200, same machine, the session's last device time):
# racecheck alone on the fused fp32 backward's default (M = 5). It did not
# finish in 80 s.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/.devbuild/s32c LNTUNE_CACHE=off; D=$PWD/.devbuild/s32c; LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=5 LNTUNE_SWEEP_RESIDUAL=1 timeout 80 compute-sanitizer --tool racecheck --error-exitcode 9 $D/lntune_sweep bwd fp32 262144 > $OUT/racecheck_addln_call5.log 2>&1; echo "racecheck addln M=5 rc=$?"; grep -E "SUMMARY|bwd" $OUT/racecheck_addln_call5.log
