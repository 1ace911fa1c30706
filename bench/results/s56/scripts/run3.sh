#!/usr/bin/env bash
# Call 3 (session 56). compute-sanitizer (memcheck, racecheck, synccheck) on
# main (s56a) in one call, each tool and suite part its own process beside
# the others (the .ci scripts run them one after another, past a call's 600
# s): .ci/gpu_sanitize.sh's gpu_test filter and its norm variants, with the
# forward's every config at M = 300 (VariantSpace N = 1000 and 1152: rows of
# several a CTA, whose statistics warp 0 stores behind named barrier 1 since
# session 55), .ci/gpu_sanitize_fwd_smem.sh's filter, every 8th wide
# backward config, and memcheck over the stress test. A run cut by its
# timeout is not a pass.
source bench/gpu_call.sh
use s56a
g='Gpu.DwdbRowSplits*:Gpu.DegenerateRows*:Gpu/Sweep.*M1_*:Gpu/Sweep.*M3_N*:Gpu/Sweep.*N40001*:Gpu/Sweep.*N100000*:Gpu/Sweep.*M64_N12288*:Gpu.NanAndInf*:Gpu.ZeroRows*'
n='Norms/Variants.*_M67_N37_pad5:Norms/Variants.*rmsnorm_*_M7_N20001:Norms/VariantSpace.*v0_N1000_bwd_dx:Norms/VariantSpace.*v0_N1000_fwd:Norms/VariantSpace.*v2_N1152_fwd:GpuNorms.SingleElementRows:GpuNorms.NanAndInf*:GpuNorms.DresidualInPlace*'
b='Norms/SmemForward.EveryConfigIsCorrect/'
f="${b}ln_bf16_wfp32_N40000:${b}ln_fp16_resfp32_outfp32_N32768_pad4:${b}rms_bf16_resbf16_N65536_pad1"
san() {  # tag tool binary filter [env...]
  local tag=$1 tool=$2 bin=$3 filt=$4; shift 4
  env "$@" timeout 500 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 10 $D/$bin \
    --gtest_filter="$filt" --gtest_brief=1 > $O/san_${tag}_$tool.log 2>&1
  echo "$tag $tool rc=$?" >> $O/san_rc.txt
}
s sanitizers
pids=()
for tool in memcheck racecheck synccheck; do
  san gpu $tool gpu_test "$g" & pids+=($!)
  san norms $tool gpu_norms_test "$n" & pids+=($!)
  san smem $tool gpu_norms_test "$f" & pids+=($!)
  san wide $tool gpu_test 'Gpu.WideBackward*' LNTUNE_TEST_WIDE_STRIDE=8 & pids+=($!)
done
san c16 memcheck gpu_norms_test "${b}rms_fp32_N262144" & pids+=($!)
( LNTUNE_STRESS_SECONDS=10 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 10 \
    $D/gpu_stress_test --gtest_brief=1 > $O/san_stress_memcheck.log 2>&1; echo "stress memcheck rc=$?" >> $O/san_rc.txt ) & pids+=($!)
wait "${pids[@]}"
sort $O/san_rc.txt
cd $O && tar czf san_logs.tgz san_*.log && rm -f san_*.log
tar xzf san_logs.tgz -O | grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|FAILED|configs checked" | sort | uniq -c | sort -rn | head -40
s done
