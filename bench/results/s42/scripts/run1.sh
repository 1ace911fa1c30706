#!/usr/bin/env bash
# Call 1 (session 42). s42a = main at 79352d7, s41t = 78fb893 (its defaults
# differ from main's only at 162732f: the 16-bit forward of 65537-131071
# columns whose 16384-column slabs are 5-7 over the slabs in shared memory).
# 1. A/B s41t -> s42a there (2 rounds). 2. Every config of the fp32 forward
# at 40000. 3. The defaults at hidden sizes of current models that are not
# powers of two (x = 512 MiB; train at M = 4096). 4. The wide backward's
# fine split (slabs of other than a power of two): the GPU test, then every
# wide config at 140000-200000.
source bench/gpu_call.sh
s "A/B 162732f"
OUT=$O bash bench/gpu_ab.sh ab1 2 $B/s41t $B/s42a -- "fwd||fwd bf16 70000 90000 100000 110000" \
  "fwd||fwd fp16 100000" "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 70000 100000"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42a
S=$B/s42a/lntune_sweep
sw() { local tag=$1 t=$2; shift 2; LNTUNE_SWEEP_EVERY=1 timeout $t $S "$@" > $O/sw_$tag.log 2>&1; echo "$tag rc=$?"; python3 bench/sweep_top.py $O/sw_$tag.log 5; }
s "fp32 fwd 40000"
sw fwd32 40 fwd fp32 40000
s "hidden sizes"
H="1536 2560 3072 3584 5120 6144 7168 12288 14336 18432 20480 28672"
OUT=$O bash bench/gpu_ab.sh hidden 1 $B/s42a -- "fwd||fwd bf16 $H" "fwd||fwd fp32 $H" "bwd||bwd bf16 $H" "bwd||bwd fp32 $H" \
  "m4096|LNTUNE_SWEEP_M=4096|train bf16 2560 3584 5120 7168"
s "wide backward tests"
LNTUNE_TEST_WIDE_N=150000 timeout 150 $B/s42a/gpu_test --gtest_filter='*WideBackwardConfigs*' --gtest_brief=1 > $O/gputest_wide.log 2>&1; echo "gpu_test rc=$?"
tail -3 $O/gputest_wide.log
s "wide backward sweeps"
export LNTUNE_SWEEP_WIDE=1
sw bwd16 80 bwd bf16 140000 150000 180000
sw bwd32 80 bwd fp32 150000 180000 200000
s done
