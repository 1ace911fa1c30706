#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) over the forward with a
# slab in shared memory (fwd_smem.cuh, sm_90+): every such config of the
# search space for a LayerNorm row that leaves its last CTA partly empty
# (bf16, N = 40000: bulk copies, clusters of 1 to 4), a row with 8-byte and
# 16-byte streams side by side (fp16 x by cp.async, fp32 residual by bulk
# copies), and 2-byte accesses (bf16, padded rows), plus the clusters of 16
# (fp32, N = 262144) under memcheck.
#   bash .ci/gpu_sanitize_fwd_smem.sh DIR      (DIR holds gpu_norms_test)
set -uo pipefail
dir=${1:?usage: gpu_sanitize_fwd_smem.sh DIR}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
base='Norms/SmemForward.EveryConfigIsCorrect/'
filter="${base}ln_bf16_wfp32_N40000:${base}ln_fp16_resfp32_outfp32_N32768_pad4:${base}rms_bf16_resbf16_N65536_pad1"
rc=0
for tool in memcheck racecheck synccheck; do
  echo "=== compute-sanitizer --tool $tool"
  compute-sanitizer --tool "$tool" --print-limit 20 "$dir/gpu_norms_test" --gtest_filter="$filter" --gtest_brief=1 \
    >"${OUT:-/tmp}/sanitize_fwd_smem_$tool.log" 2>&1 || rc=1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|smem fwd|tests? ran|PASSED|FAILED|SKIPPED" \
    "${OUT:-/tmp}/sanitize_fwd_smem_$tool.log" | tail -8
done
echo "=== compute-sanitizer --tool memcheck: clusters of 16"
compute-sanitizer --tool memcheck --print-limit 20 "$dir/gpu_norms_test" --gtest_filter="${base}rms_fp32_N262144" \
  --gtest_brief=1 >"${OUT:-/tmp}/sanitize_fwd_smem_c16.log" 2>&1 || rc=1
grep -E "ERROR SUMMARY|smem fwd|tests? ran|PASSED|FAILED|SKIPPED" "${OUT:-/tmp}/sanitize_fwd_smem_c16.log" | tail -5
exit $rc
