#!/usr/bin/env bash
# Call 1 (session 47). s47a = main after session 46's review (a15f754: the
# wide backward's staged dz through add_loaded, compiled but not run on a
# GPU): the fused cases and memcheck on them; then, for
# bench/GPU_CHECKLIST.md, every config of the 16-bit backward beside an
# fp32 residual stream at 32768 / 262144 (item 6: the defaults spill), the
# plain RMSNorm bf16 backward at 16384 with deeper staging (item 2: 89% of
# copy where the fused form runs 98-101), and Nsight Compute on it.
source bench/gpu_call.sh
use s47a
s "cases"
cases 100 '*Variants*res*' '*Variants*res*N16384*:*Variants*res*N65536*:*Variants*resbf16*N40000*:*Variants*resfp32*M9_N262144*'
s "fp32 residual stream"
(export LNTUNE_SWEEP_RESIDUAL=fp32; sw lnr32k 45 bwd bf16 32768)
(export LNTUNE_SWEEP_RESIDUAL=fp32; sw lnr256k 50 bwd bf16 262144)
(export LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_OP=rmsnorm; sw rmsr256k 50 bwd bf16 262144)
s "rms 16384 deeper"
C="block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=132 cluster_size=2"
for r in 4 5 6; do C="$C;block_size=8192 num_warps=8 rows_per_cta=$r group_size_m=66 cluster_size=2"; done
C="$C;block_size=8192 num_warps=16 rows_per_cta=6 group_size_m=66 cluster_size=2"
for w in 4 8; do for r in 6 8; do C="$C;block_size=4096 num_warps=$w rows_per_cta=$r group_size_m=66 cluster_size=4"; done; done
C="$C;block_size=4096 num_warps=4 rows_per_cta=4 group_size_m=33 cluster_size=4"
(export LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_CONFIG="$C"; sw rms16k 60 bwd bf16 16384)
(export LNTUNE_SWEEP_CONFIG="$C"; sw ln16k 60 bwd bf16 16384)
s "ncu"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in plain res; do
  [ $v = res ] && export LNTUNE_SWEEP_RESIDUAL=1
  LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_CONFIG=default timeout 100 $NCU --kernel-name regex:bwd_dx --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    $S bwd bf16 16384 > $O/ncu_rms_$v.txt 2>&1; echo "ncu $v rc=$?"
  grep -E "Duration|Memory Throughput|DRAM Throughput|Issue Slots Busy|Issued Ipc|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|No Eligible|Block Size|Grid Size|Executed Instructions |Shared Memory Configuration|Dynamic Shared" $O/ncu_rms_$v.txt | head -20
done
s done
