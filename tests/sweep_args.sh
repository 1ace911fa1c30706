#!/usr/bin/env bash
# lntune_sweep's environment checks, which run before it touches a GPU: each
# bad value must exit 2 naming the variable and the value (so that a typo
# in a device call's script fails at once, not after the call's setup).
# ctest label cpu.
#   bash tests/sweep_args.sh PATH_TO_LNTUNE_SWEEP
set -uo pipefail
sweep=${1:?usage: sweep_args.sh PATH_TO_LNTUNE_SWEEP}
fails=0
expect_bad() {  # VAR=value, the text the message must hold
  local assign=$1 want=$2 out rc
  out=$(env "$assign" "$sweep" bwd bf16 1024 2>&1)
  rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out"; then
    echo "ok: $assign -> exit 2, '$want'"
  else
    echo "FAILED: $assign: exit $rc, output: $out"
    fails=$((fails + 1))
  fi
}
expect_bad "LNTUNE_SWEEP_RESIDUAL=fp64" "LNTUNE_SWEEP_RESIDUAL must be 0, 1, fp32, fp16 or bf16, got 'fp64'"
expect_bad "LNTUNE_SWEEP_RESIDUAL=yes" "got 'yes'"
expect_bad "LNTUNE_SWEEP_CONFIG=block_size=1024 num_warps=4" "LNTUNE_SWEEP_CONFIG 'block_size=1024 num_warps=4' is not"
# A list: the bad entry is named, not the whole list.
expect_bad "LNTUNE_SWEEP_CONFIG=block_size=1024 num_warps=4 rows_per_cta=1 group_size_m=132;block_size=x" \
  "LNTUNE_SWEEP_CONFIG 'block_size=x' is not"
expect_bad "LNTUNE_SWEEP_OP=groupnorm" "LNTUNE_SWEEP_OP must be layernorm or rmsnorm, got 'groupnorm'"
expect_bad "LNTUNE_SWEEP_M=0" "LNTUNE_SWEEP_M must be a row count >= 1, got '0'"
[ $fails -eq 0 ] && echo "all lntune_sweep argument checks passed" || { echo "$fails failed"; exit 1; }
