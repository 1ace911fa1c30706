#!/usr/bin/env bash
# Call 2 (session 37). s37a = main + the in-kernel finish by warps
# (bwd_dwdb.cuh finish_by_warps; rt::finish_fits takes grids of up to 256
# partial rows and CTAs of 512 threads). The finish's GPU tests; every
# config at M = 4096 (the automatic finish, so grids of 132 CTAs now finish
# in the kernel); the default with both finishes at M = 256 .. 16384.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37a
S=$B/s37a/lntune_sweep
s "tests"
timeout 150 $B/s37a/gpu_test --gtest_filter='Gpu.WarpFinish*:Gpu.*Finish*:Gpu.UnalignedGrads*:Gpu.BackwardIsBitwise*:Gpu.ForwardAndBackwardMatchReference/*' > $O/tests_call2.log 2>&1; echo "tests rc=$?"; grep -E 'FAILED|OK \] Gpu.(Warp|InKernel)|finish   ' $O/tests_call2.log | head -20
tail -4 $O/tests_call2.log
s "default, both finishes"
for M in 256 1024 4096 16384; do
  LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_M=$M timeout 60 $S bwd bf16 512 1024 2048 4096 8192 >> $O/finish_call2.log 2>&1; echo "M=$M rc=$?"
done
grep finish $O/finish_call2.log
s "every config, train"
LNTUNE_SWEEP_EVERY=1 timeout 330 $S train bf16 1024 2048 4096 > $O/every_train_call2.log 2>&1; echo "every rc=$?"
grep -E "^train" $O/every_train_call2.log
python3 - $O/every_train_call2.log <<'PY'
import re,sys
blocks=open(sys.argv[1]).read().split("\ntrain ")
rows=[];N=None
for line in open(sys.argv[1]):
    m=re.match(r"\s+(block_size=.*?)\s+([\d.]+) us\s+([\d.]+)% of copy",line)
    if m: rows.append((m.group(1),float(m.group(2)),float(m.group(3))))
    m2=re.match(r"train\s+\S+\s+N=(\d+)\s+M=",line)
    if m2:
        rows.sort(key=lambda r:r[1]); print("N=%s top:"%m2.group(1))
        for r in rows[:8]: print("  %-72s %7.1f us %5.1f%%"%r)
        rows=[]
PY
s done
