#!/usr/bin/env bash
# Call 9 (session 36, H200). s36g = the session's last code. The add +
# RMSNorm backward's new default against the CPU reference, memcheck of
# the new defaults, then the GPU suites.
source bench/gpu_call.sh
L=$B/s36g/lntune
s "check (lntune bench) and memcheck"
BQ="--min-reps 3 --max-reps 10 --max-seconds 0.2"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36g
timeout 60 $L bench $BQ --kernel bwd --dtype bf16,fp16 --residual --op rmsnorm --n 65536,65535 --m 300,40 > $O/check_call9.log 2>&1; echo "addrms rc=$?"
grep -cE " ok " $O/check_call9.log; grep -E "^(fwd|bwd)" $O/check_call9.log | grep -vc " ok "
for a in "--kernel fwd --dtype bf16 --n 262144 --m 100" "--kernel fwd --dtype bf16 --n 65536 --m 100" \
         "--kernel bwd --dtype bf16 --op rmsnorm --n 65536 --m 100" "--kernel bwd --dtype bf16 --residual --n 65536 --m 100"; do
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $L bench --min-reps 1 --max-reps 1 --max-seconds 0.01 $a >> $O/memcheck_call9.log 2>&1; echo "memcheck $a rc=$?"
done
grep -h "ERROR SUMMARY" $O/memcheck_call9.log
unset LD_LIBRARY_PATH
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s36g call9
s done
