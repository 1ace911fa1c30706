#!/usr/bin/env bash
# The GPU-call helpers (bench/gpu_ab.sh, bench/gpu_suites.sh) against
# stand-in binaries, so that a broken helper shows here, not in a GPU call
# whose device time is then spent. ctest label cpu.
#   bash tests/bench_scripts.sh REPO_ROOT
set -uo pipefail
root=$(cd "${1:?usage: bench_scripts.sh REPO_ROOT}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() {  # description, command...: the command must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fails=$((fails + 1)); fi
}

# A stand-in lntune_sweep: the copy line, then one line per N as the real
# one prints it ("<op> <dtype> N=<n> M=<m> <config> <us> us <GB/s> GB/s <%>% | ..."),
# the % naming the build; dtype "bad" exits 3.
for b in a b; do
  pct=$([ $b = a ] && echo 1 || echo 2)
  mkdir -p "$T/$b"
  cat > "$T/$b/lntune_sweep" <<EOF
#!/usr/bin/env bash
echo "GPU  copy 3000 GB/s (512 MiB D2D, read+write)"
for n in "\${@:3}"; do
  echo "\$1    \$2 N=\$n    M=\${LNTUNE_SWEEP_M:-big}     \$LNTUNE_SWEEP_CONFIG     1\$n.0 us  100 GB/s  $pct.0% | best"
done
[ "\$2" != bad ]
EOF
  chmod +x "$T/$b/lntune_sweep"
done

# gpu_ab.sh: every build, round and spec, prefixed; the summary sorted by
# label, shape, build and round; the spec's variables reach the sweep.
mkdir -p "$T/out"
OUT="$T/out" bash "$root/bench/gpu_ab.sh" ab 2 "$T/a" "$T/b" -- "m4096|LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048" \
  "big||fwd fp32 4096" > "$T/summary.txt" 2> "$T/err.txt"
check "gpu_ab.sh exits 0" test $? = 0
check "gpu_ab.sh logs every sweep line" test "$(grep -c ' us ' "$T/out/ab.log")" = 12
check "gpu_ab.sh passes the spec's variables" grep -q "^a r1 m4096 bwd    bf16 N=1024    M=4096     default " "$T/out/ab.log"
check "gpu_ab.sh's summary order" diff <(head -4 "$T/summary.txt") - <<'EOF'
big fp32 N=4096 a r1 14096.0 us 1.0%
big fp32 N=4096 a r2 14096.0 us 1.0%
big fp32 N=4096 b r1 14096.0 us 2.0%
big fp32 N=4096 b r2 14096.0 us 2.0%
EOF
OUT="$T/out" bash "$root/bench/gpu_ab.sh" bad 1 "$T/a" -- "x||bwd bad 1" > /dev/null 2> "$T/err.txt"
check "gpu_ab.sh exits 1 when a sweep fails" test $? = 1
check "gpu_ab.sh names the failed sweep" grep -q "round 1 'x||bwd bad 1' failed" "$T/err.txt"
for args in "x 0 $T/a -- x||a" "x 1 $T/missing -- x||a" "x 1 $T/a -- x||" "x 1 $T/a"; do
  # shellcheck disable=SC2086  # the arguments are a word list
  bash "$root/bench/gpu_ab.sh" $args > /dev/null 2> "$T/err.txt"
  check "gpu_ab.sh refuses '$args' with exit 2 and a reason" test $? = 2 -a -s "$T/err.txt"
done

# gpu_suites.sh: each suite present runs (gpu_norms_test in 4 shards, each
# told its index), logs land in $OUT, and a failing suite fails the script.
mkdir -p "$T/s"
cat > "$T/s/gpu_norms_test" <<'EOF'
#!/usr/bin/env bash
echo "shard ${GTEST_SHARD_INDEX}/${GTEST_TOTAL_SHARDS}"
echo "[  PASSED  ] 1 test."
EOF
cat > "$T/s/gpu_test" <<'EOF'
#!/usr/bin/env bash
echo "[  PASSED  ] 2 tests."
exit "${FAIL_GPU_TEST:-0}"
EOF
chmod +x "$T/s/gpu_norms_test" "$T/s/gpu_test"
(cd "$root" && OUT="$T/out" bash bench/gpu_suites.sh "$T/s" t > "$T/suites.txt" 2>&1)
check "gpu_suites.sh exits 0" test $? = 0
check "gpu_suites.sh runs 4 shards" test "$(grep -c '^shard [0-3]/4$' "$T/out/gpu_norms_test_t.log")" = 4
check "gpu_suites.sh keeps gpu_test's log" grep -q "2 tests" "$T/out/gpu_test_t.log"
(cd "$root" && FAIL_GPU_TEST=1 OUT="$T/out" bash bench/gpu_suites.sh "$T/s" t2 > "$T/suites.txt" 2>&1)
check "gpu_suites.sh exits 1 when a suite fails" test $? = 1

[ "$fails" = 0 ] && echo "all checks passed" || echo "$fails check(s) failed"
exit $((fails > 0))
