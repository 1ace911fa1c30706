#!/usr/bin/env bash
# The whole GPU check in one go (on a machine with a GPU):
#   bash .ci/gpu_all.sh DIR    (DIR holds gpu_test, gpu_norms_test, gpu_stress_test, tuner_gpu_test, lntune_overhead,
#                               liblntune.so)
set -uo pipefail
dir=${1:?usage: gpu_all.sh DIR}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export LNTUNE_CACHE=${LNTUNE_CACHE:-/tmp/lntune-check.db}
rc=0
echo "=== GPU suite (sharded)"; SHARDS=${SHARDS:-8} bash .ci/gpu_check.sh "$dir" || rc=1
echo "=== norm variants: RMSNorm, fused residual, zero-centred gamma, output dtype"
"$dir/gpu_norms_test" --gtest_brief=1 2>&1 | tail -4 || rc=1
echo "=== stress: 8 launching threads while configs change (LNTUNE_STRESS_SECONDS, default 10)"
"$dir/gpu_stress_test" --gtest_brief=1 2>&1 | tail -4 || rc=1
echo "=== tuner GPU tests"; "$dir/tuner_gpu_test" --gtest_brief=1 2>&1 | tail -3 || rc=1
echo "=== sanitizers"; bash .ci/gpu_sanitize.sh "$dir" || rc=1
echo "=== python binding vs PyTorch"
LNTUNE_LIBRARY="$dir/liblntune.so" PYTHONPATH="python${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q -rfs tests/python/test_lntune_torch.py tests/python/test_lntune_torch_norms.py tests/python/test_torch_norms_cpu.py \
  >"${OUT:-/tmp}/python_torch.log" 2>&1 || rc=1
grep -E "^(FAILED|ERROR)|passed|failed" "${OUT:-/tmp}/python_torch.log" | tail -25
echo "=== python binding, opt-in C++ paths on"; bash .ci/gpu_torch_native.sh "$dir" || rc=1
echo "=== host overhead"; "$dir/lntune_overhead" || rc=1
exit $rc
