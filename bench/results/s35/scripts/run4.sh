#!/usr/bin/env bash
# Call 4 (session 35, H200). f35b = 8960fe9 (fast-memory defaults) + the wide
# kernels' spare grids for clusters of 4. (1) The new defaults against the
# float64 CPU reference (`lntune bench`, cache off: the launcher's default,
# checked; exit 3 on a failed check), odd N included. (2) memcheck of three
# new defaults. (3) Every wide config where clusters of 4 may now fit.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35b
L=$B/f35b/lntune
S=$B/f35b/lntune_sweep
s "check the new defaults (lntune bench)"
BQ="--min-reps 3 --max-reps 10 --max-seconds 0.2"
timeout 60 $L bench $BQ --kernel fwd --dtype bf16,fp16 --n 16384,12000 --m 8200 > $O/check_call4.log 2>&1; echo "fwd16k rc=$?"
timeout 120 $L bench $BQ --kernel fwd,bwd --dtype bf16,fp16 --n 32768,40001,65536,100000,131072,262144 --m 600 >> $O/check_call4.log 2>&1; echo "long rc=$?"
timeout 40 $L bench $BQ --kernel bwd --dtype fp32 --n 262144,200000 --m 300 >> $O/check_call4.log 2>&1; echo "fp32 long rc=$?"
timeout 60 $L bench $BQ --kernel bwd --dtype fp32 --residual --n 256,1000,1024,3000,4096 --m 9000 >> $O/check_call4.log 2>&1; echo "addln32 rc=$?"
timeout 40 $L bench $BQ --kernel bwd --dtype fp32 --residual --op rmsnorm --n 1024,8192 --m 9000 >> $O/check_call4.log 2>&1; echo "addrms32 rc=$?"
grep -E "check|^(fwd|bwd)" $O/check_call4.log | awk '{print $1,$2,$3,$4,$(NF-1),$NF}' | head -60
s "memcheck"
for spec in "fwd bf16 65536|400" "bwd bf16 131072|40" "bwd fp32 256|9000|1"; do
  IFS='|' read -r args m res <<< "$spec"
  LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m LNTUNE_SWEEP_RESIDUAL=${res:-0} timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $S $args > $O/memcheck_call4.log 2>&1
  echo "memcheck $args M=$m residual=${res:-0}: rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck_call4.log)"
done
s "every wide config (clusters of 4 with spares)"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 90 $S bwd bf16 65536 131072 > $O/every_wide_bwd_call4.log 2>&1; echo "bwd rc=$?"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 90 $S fwd bf16 32768 65536 131072 > $O/every_wide_fwd_call4.log 2>&1; echo "fwd rc=$?"
grep -hE "default" $O/every_wide_*_call4.log
grep -h "cluster_size=4" $O/every_wide_*_call4.log | sort -t'%' -k1 | head -0
s done
