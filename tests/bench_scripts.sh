#!/usr/bin/env bash
# The GPU-call helpers (bench/gpu_call.sh, gpu_ab.sh, gpu_suites.sh, gpu_tables.sh,
# scripts/stage.sh) against
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
OUT="$T/out" bash "$root/bench/gpu_ab.sh" bad 1 "$T/a" -- "x|LNTUNE_SWEEP_M=64&LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256" > /dev/null 2> "$T/err.txt"
check "gpu_ab.sh refuses variables joined by '&'" test $? = 2
check "gpu_ab.sh names the word" grep -q "got 'LNTUNE_SWEEP_M=64&LNTUNE_SWEEP_OP=rmsnorm'" "$T/err.txt"
OUT="$T/out" bash "$root/bench/gpu_ab.sh" bad 1 "$T/a" -- "x|M=64 oops|fwd bf16 256" > /dev/null 2> "$T/err.txt"
check "gpu_ab.sh refuses a variable without '='" test $? = 2
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
for vars in "GTEST=0" "GTEST=2" "PYTEST=yes"; do
  (cd "$root" && env $vars OUT="$T/out" bash bench/gpu_suites.sh "$T/s" t3 > "$T/suites.txt" 2> "$T/err.txt")
  check "gpu_suites.sh refuses $vars (no suite, or not 0/1) with exit 2 and a reason" test $? = 2 -a -s "$T/err.txt"
done
check "gpu_suites.sh ran nothing when refused" test ! -e "$T/out/gpu_norms_test_t3.log"

# gpu_tables.sh: a stand-in python3 (the benchmark scripts: it writes the
# markdown table into --out, and fails for the script named in FAIL_SCRIPT)
# and the stand-in lntune_sweep; every step logged under $OUT with the tag,
# the tables copied, a failed step named while the rest run on.
mkdir -p "$T/bin" "$T/tab"
cat > "$T/bin/python3" <<'STANDIN'
#!/usr/bin/env bash
out=""
prev=""
for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done
echo "python3 $*"
case "$*" in *"${FAIL_SCRIPT:-none}"*) exit 4 ;; esac
if [ -n "$out" ] && [ -z "${NO_TABLE:-}" ]; then
  mkdir -p "$out"
  case "$*" in *bench_norms.py*) echo "| norms |" > "$out/norms.md" ;; *) echo "| table |" > "$out/results.md" ;; esac
fi
case "$*" in *--grid*) echo "grid-e2e bf16: 32 N, geomean x1.50, min x1.01; below 1.0: none" ;; esac
exit 0
STANDIN
chmod +x "$T/bin/python3"
(cd "$T" && PATH="$T/bin:$PATH" OUT="$T/tab" bash "$root/bench/gpu_tables.sh" "$T/a" s1 > "$T/tables.txt" 2> "$T/err.txt")
check "gpu_tables.sh exits 0" test $? = 0
for f in ext train bandwidth norms normsgrid gaps hidden grid e2e; do
  check "gpu_tables.sh logs step $f" test -s "$T/tab/${f}_s1.log"
done
check "gpu_tables.sh times the gap lengths, LayerNorm and RMSNorm" \
  test -s "$T/tab/gaps_s1.md" -a -s "$T/tab/gaps_norms_s1.md"
check "gpu_tables.sh asks for the gap lengths" grep -q -- "--bandwidth-ns 20000,40000,100000,200000" "$T/tab/gaps_s1.log"
check "gpu_tables.sh times the hidden sizes, LayerNorm and RMSNorm" \
  test -s "$T/tab/hidden_s1.md" -a -s "$T/tab/hidden_norms_s1.md"
check "gpu_tables.sh asks for the hidden sizes" grep -q -- "--bandwidth-ns 1152,2304,2560,4608,5120,9216,12288" "$T/tab/hidden_s1.log"
check "gpu_tables.sh times fp16, bf16 and fp32 at M = 4096" test "$(grep -c '^train ' "$T/tab/train_s1.log")" = 15
check "gpu_tables.sh copies the tables" test -s "$T/tab/bandwidth_s1.md" -a -s "$T/tab/norms_s1.md" -a -s "$T/tab/grid_s1.md" \
  -a -s "$T/tab/normsgrid_s1.md"
check "gpu_tables.sh runs RMSNorm and the fused forms at M = 4096" \
  grep -q "bench_norms.py --section grid --quick --dtypes bf16,fp32" "$T/tab/normsgrid_s1.log"
check "gpu_tables.sh runs the bandwidth regime against PyTorch" \
  grep -q "bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch" "$T/tab/bandwidth_s1.log"
check "gpu_tables.sh prints the e2e summary" grep -q "geomean x1.50" "$T/tables.txt"
(cd "$T" && PATH="$T/bin:$PATH" FAIL_SCRIPT=bench_norms.py TABLES="norms grid" OUT="$T/tab" bash "$root/bench/gpu_tables.sh" "$T/a" s2 > "$T/tables.txt" 2> "$T/err.txt")
check "gpu_tables.sh exits 1 when a step fails" test $? = 1
check "gpu_tables.sh names the failed step" grep -q "failed: norms (exit 4)" "$T/err.txt"
check "gpu_tables.sh runs the steps after a failed one" test -s "$T/tab/grid_s2.md"
check "gpu_tables.sh runs only the steps asked for" test ! -e "$T/tab/train_s2.log"
(cd "$T" && PATH="$T/bin:$PATH" NO_TABLE=1 TABLES="grid" OUT="$T/tab" bash "$root/bench/gpu_tables.sh" "$T/a" s3 > /dev/null 2> "$T/err.txt")
check "gpu_tables.sh fails a step that wrote no table" grep -q "failed: grid (no table)" "$T/err.txt"
for args in "$T/a" "$T/missing t" "$T/a bad/tag" "$T/s t"; do
  # shellcheck disable=SC2086  # the arguments are a word list
  (PATH="$T/bin:$PATH" OUT="$T/tab" bash "$root/bench/gpu_tables.sh" $args > /dev/null 2> "$T/err.txt")
  check "gpu_tables.sh refuses '$args' with exit 2 and a reason" test $? = 2 -a -s "$T/err.txt"
done
touch "$T/tuned.db"
(cd "$T" && PATH="$T/bin:$PATH" CACHE=tuned.db TABLES="bandwidth" OUT="$T/tab" bash "$root/bench/gpu_tables.sh" "$T/a" s4 > /dev/null 2> "$T/err.txt")
check "gpu_tables.sh with CACHE times the tuned kernels too" \
  grep -q -- "--providers lntune,lntune-default,torch" "$T/tab/bandwidth_s4.log"
(cd "$T" && PATH="$T/bin:$PATH" CACHE=missing.db TABLES="bandwidth" OUT="$T/tab" bash "$root/bench/gpu_tables.sh" "$T/a" s5 > /dev/null 2> "$T/err.txt")
check "gpu_tables.sh refuses a CACHE that names no file, with exit 2" test $? = 2
check "gpu_tables.sh names the missing cache" grep -q "CACHE names no file: 'missing.db'" "$T/err.txt"
(PATH="$T/bin:$PATH" OUT="$T/tab" TABLES="train plots" bash "$root/bench/gpu_tables.sh" "$T/a" t > /dev/null 2> "$T/err.txt")
check "gpu_tables.sh refuses an unknown step" grep -q "unknown step 'plots'" "$T/err.txt"

# scripts/stage.sh: a build's binaries, stripped, into .devbuild/NAME of a
# copy of the repository's scripts (stand-in executables: real ELF files,
# so that strip works), and its refusals.
mkdir -p "$T/repo/scripts" "$T/bld/bench" "$T/bld/tests" "$T/bld/tuner" "$T/bld/lib"
cp "$root/scripts/stage.sh" "$T/repo/scripts/"
for f in bench/lntune_sweep bench/lntune_overhead tests/gpu_test tests/gpu_norms_test tests/tuner_gpu_test \
         tests/gpu_stress_test tuner/lntune lib/liblntune.so.0.1.0; do
  cp "$(type -P true)" "$T/bld/$f"
done
(bash "$T/repo/scripts/stage.sh" s1 "$T/bld" > /dev/null 2> "$T/err.txt")
check "stage.sh stages a build" test -x "$T/repo/.devbuild/s1/gpu_test" -a -f "$T/repo/.devbuild/s1/liblntune.so.0" \
  -a -L "$T/repo/.devbuild/s1/liblntune.so"
for bad in "../x" ".x" "a/b"; do
  (bash "$T/repo/scripts/stage.sh" "$bad" "$T/bld" > /dev/null 2> "$T/err.txt")
  check "stage.sh refuses NAME '$bad' with exit 2 and a reason" test $? = 2 -a -s "$T/err.txt"
done
rm "$T/bld/tests/gpu_test"
(bash "$T/repo/scripts/stage.sh" s2 "$T/bld" > /dev/null 2> "$T/err.txt")
check "stage.sh names a missing binary" grep -q "tests/gpu_test is missing" "$T/err.txt"

# gpu_call.sh (sourced by each call's script): the GPU line, B and O, s, the
# cache off; OUT when given.
mkdir -p "$T/bin" "$T/call"
printf '#!/usr/bin/env bash\necho "GPU X, 1.0"\n' > "$T/bin/nvidia-smi"
chmod +x "$T/bin/nvidia-smi"
(cd "$T/call" && PATH="$T/bin:$PATH" OUT=/o bash -c "source '$root/bench/gpu_call.sh'; s step; echo \"\$B|\$O|\$LNTUNE_CACHE\"") \
  > "$T/call.txt" 2>&1
check "gpu_call.sh prints the GPU, a step header, B, O and the cache off" \
  bash -c "grep -qx 'GPU X, 1.0' '$T/call.txt' && grep -q '^=== step (' '$T/call.txt' && grep -qx '$T/call/.devbuild|/o|off' '$T/call.txt'"

# sw: every sweep of a call in one file ($O/sweeps.log, a header a sweep;
# the device tool returns at most 8 files), each shape's fastest printed.
# (Its own stand-ins: $T/bin's python3 only echoes its arguments.)
mkdir -p "$T/o" "$T/swbin"
cp "$T/bin/nvidia-smi" "$T/swbin/"
cat > "$T/swbin/fake_sweep" <<'EOS'
#!/usr/bin/env bash
echo "   block_size=1024 num_warps=8 rows_per_cta=4 group_size_m=132                 16.1 us   36.9% of copy"
echo "   block_size=1024 num_warps=4 rows_per_cta=2 group_size_m=264                 14.6 us   40.7% of copy"
echo "bwd    bf16 N=$3    M=4096     default     16.1 us  1586 GB/s  36.9% | best"
EOS
chmod +x "$T/swbin/fake_sweep"
(cd "$root" && PATH="$T/swbin:$PATH" OUT="$T/o" bash -c "source bench/gpu_call.sh; S=fake_sweep; sw one 10 bwd bf16 1024; sw two 10 bwd bf16 2048") \
  > "$T/sw.txt" 2>&1
check "sw appends every sweep to one sweeps.log with a header each" \
  bash -c "[ \$(grep -c '^### sw ' '$T/o/sweeps.log') = 2 ] && grep -qx '### sw two: bwd bf16 2048' '$T/o/sweeps.log' && [ \$(ls '$T/o') = sweeps.log ]"
check "sw prints each shape's fastest config first" \
  bash -c "grep -q '^one rc=0' '$T/sw.txt' && grep -A1 'N=2048' '$T/sw.txt' | grep -q 'num_warps=4 rows_per_cta=2'"

# sw_ab: rounds, then builds, then specs in order, each spec's variables
# exported whole (a config list holds spaces and ';'); gtests: gpu_test's
# summary.
mkdir -p "$T/ab/o"
for b in b1 b2; do
  mkdir -p "$T/ab/devb/$b"
  printf '#!/usr/bin/env bash\necho "build=%s cfg=$LNTUNE_SWEEP_CONFIG m=$LNTUNE_SWEEP_M args=$*"\n' "$b" > "$T/ab/devb/$b/lntune_sweep"
  chmod +x "$T/ab/devb/$b/lntune_sweep"
done
printf '#!/usr/bin/env bash\necho "[  PASSED  ] 3 tests. filter=$1"\n' > "$T/ab/devb/b1/gpu_test"
chmod +x "$T/ab/devb/b1/gpu_test"
(cd "$root" && PATH="$T/swbin:$PATH" OUT="$T/ab/o" bash -c "source bench/gpu_call.sh; B='$T/ab/devb'
  sw_ab 2 'b1 b2' 10 -- 't|LNTUNE_SWEEP_CONFIG=block_size=64 num_warps=2;block_size=64 num_warps=4&LNTUNE_SWEEP_M=7|bwd bf16 64'
  use b1; gtests 10 'Gpu.X*'") > "$T/ab.txt" 2>&1
check "sw_ab runs rounds, then builds, in order" \
  bash -c "[ \"\$(grep '^### sw ' '$T/ab/o/sweeps.log' | cut -d: -f1 | tr '\n' ' ')\" = '### sw b1_r1_t ### sw b2_r1_t ### sw b1_r2_t ### sw b2_r2_t ' ]"
check "sw_ab exports each spec's variables whole" \
  grep -q 'build=b2 cfg=block_size=64 num_warps=2;block_size=64 num_warps=4 m=7 args=bwd bf16 64' "$T/ab/o/sweeps.log"
check "gtests runs gpu_test with the filter and prints its summary" \
  bash -c "grep -q '^gpu_test rc=0' '$T/ab.txt' && grep -q 'PASSED  \] 3 tests. filter=--gtest_filter=Gpu.X\*' '$T/ab.txt'"

# grid_ratios.py: lntune / PyTorch per dtype and direction (it had lumped
# every dtype of a log under the last one's name).
cat > "$T/grid.log" <<'EOF'
[ 1.0s] grid fp16 M=4096 N=1024: lntune-default fwd 200 GB/s (5%); lntune-default bwd 300 GB/s (7%); torch fwd 100 GB/s (2%); torch bwd 100 GB/s (2%)
[ 1.1s] grid fp16 M=4096 N=2048: lntune-default fwd 50 GB/s (1%); lntune-default bwd 300 GB/s (7%); torch fwd 100 GB/s (2%); torch bwd 100 GB/s (2%)
[ 2.0s] grid fp32 M=4096 N=1024: lntune-default fwd 400 GB/s (9%); lntune-default bwd 500 GB/s (12%); torch fwd 100 GB/s (2%); torch bwd 100 GB/s (2%)
EOF
/usr/bin/env python3 "$root/bench/grid_ratios.py" "$T/grid.log" > "$T/ratios.txt"
check "grid_ratios.py names each dtype's minimum" grep -q "fp16 fwd: 2 N, geomean 1.00, min 0.50 (N=2048); below 1.0: N=2048 0.50" "$T/ratios.txt"
check "grid_ratios.py keeps the dtypes apart" grep -q "fp32 bwd: 1 N, geomean 5.00, min 5.00 (N=1024); below 1.0: none" "$T/ratios.txt"

# tune_trace_stats.py: a trace's keys by state and candidates by status, and
# with --keep the keys and non-ok candidates kept (a torn last line skipped).
cat > "$T/trace.jsonl" <<'EOF'
{"event": "candidate", "kernel": "fwd", "x_dtype": "bf16", "n": 1024, "m_bucket": 4, "has_bias": true, "status": "ok", "median_us": 5.0, "reps": 10}
{"event": "candidate", "kernel": "fwd", "x_dtype": "bf16", "n": 1024, "m_bucket": 4, "has_bias": true, "status": "wrong"}
{"event": "candidate", "kernel": "fwd", "x_dtype": "bf16", "n": 1024, "m_bucket": 4, "has_bias": true, "status": "slower", "median_us": 6.0, "reps": 10}
{"event": "key", "kernel": "fwd", "x_dtype": "bf16", "n": 1024, "m_bucket": 4, "has_bias": true, "state": "tuned", "seconds": 0.5}
{"event": "key", "kernel": "fwd", "x_dtype": "bf16", "n": 2048, "m_bucket": 4, "has_bias": true, "state": "failed", "seconds": 0.2}
{"event": "candidate", "kernel": "fwd", "x_dtype": "bf16", "n": 4096, "status": "ok"
EOF
/usr/bin/env python3 "$root/bench/tune_trace_stats.py" "$T/trace.jsonl" --keep "$T/kept.jsonl.gz" > "$T/outcomes.txt"
check "tune_trace_stats.py counts keys by state" grep -q "keys by state: {'tuned': 1, 'failed': 1}" "$T/outcomes.txt"
check "tune_trace_stats.py counts candidates by status" \
  grep -q "candidates by status: {'ok': 1, 'wrong': 1, 'slower': 1}" "$T/outcomes.txt"
check "tune_trace_stats.py names the torn line" grep -q "1 line(s) not JSON" "$T/outcomes.txt"
gzip -dc "$T/kept.jsonl.gz" > "$T/kept.jsonl"
check "tune_trace_stats.py --keep keeps the keys and the non-ok candidates" \
  bash -c "[ \$(grep -c . '$T/kept.jsonl') = 4 ] && ! grep -q '\"ok\"' '$T/kept.jsonl'"

# tune_gaps.py: the keys whose winner leads the default, grouped by kernel,
# form and M in N order; below --min and rows it cannot read left out.
cat > "$T/tune.log" <<'EOF'
GPU: NVIDIA H200 (sm_90, 132 SMs), driver 13000; device-to-device copy 4259 GB/s (read + written)
kernel   dtype              N  M (bucket)  winner                  median µs       GB/s  % copy  vs default  state
fwd      fp16             768    4096 (4)  b1024 w4 r4                  7.17       1760    41.3       1.13x  tuned
fwd      fp16            1024    4096 (4)  b1024 w8 r8                  8.10       2077    48.8       1.01x  tuned
bwd_dx   bf16 noB rms +res   18432    4096 (4)  b8192 w8 r2 g88 c3         163.46       3775    88.6       1.37x  tuned
bwd_dwdb fp16             256    1056 (3)  b32 w16 r1 g17               7.97        272     6.4       1.27x  tuned
EOF
/usr/bin/env python3 "$root/bench/tune_gaps.py" "$T/tune.log" > "$T/gaps.txt"
check "tune_gaps.py counts the keys that lead" grep -q "^3 of 4 keys lead their default by 1.05x or more" "$T/gaps.txt"
check "tune_gaps.py groups a form's keys" bash -c "grep -A1 '^bwd_dx bf16 noB rms +res M=4096:' '$T/gaps.txt' | grep -q 'N=18432 *b8192 w8 r2 g88 c3 *1.37x'"
check "tune_gaps.py leaves out keys under --min" bash -c "! grep -q 'N=1024 ' '$T/gaps.txt'"
check "tune_gaps.py lists the largest lead first" bash -c "sed -n 2p '$T/gaps.txt' | grep -q '^bwd_dx'"
# --trace: a bwd_dwdb key whose every chosen bwd_dx pair finishes dW/dB in
# the dx kernel is listed apart (the 1056-row key below: its one pair
# finishes inside); one that a pair reduces separately stays (the 528-row
# key: a trace before session 60, best under default, no new fields).
cat >> "$T/tune.log" <<'EOF'
bwd_dwdb fp16             256     528 (3)  b32 w8 r1 g17                5.10        272     6.4       1.20x  tuned
EOF
cat > "$T/tune.trace" <<'EOF'
{"event": "key", "kernel": "bwd_dx", "x_dtype": "fp16", "w_dtype": "fp16", "has_weight": true, "has_bias": true, "n": 256, "dwdb_form": "fp16", "joint": [{"partial_rows": 1056, "dwdb_default_us": 8.0, "dwdb_best_us": 8.0, "chosen": true, "finishes_in_kernel": true}, {"partial_rows": 528, "dwdb_default_us": 6.1, "dwdb_best_us": 5.1, "chosen": false}]}
{"event": "key", "kernel": "bwd_dx", "x_dtype": "fp16", "w_dtype": "fp32", "has_weight": true, "has_bias": true, "n": 256, "joint": [{"partial_rows": 528, "dwdb_default_us": 6.1, "dwdb_best_us": 5.1, "chosen": true}]}
not json
EOF
gzip -c "$T/tune.trace" > "$T/tune.trace.gz"
/usr/bin/env python3 "$root/bench/tune_gaps.py" "$T/tune.log" --trace "$T/tune.trace.gz" > "$T/gaps_trace.txt"
check "tune_gaps.py --trace counts the keys the backward runs" grep -q "^3 of 5 keys lead their default by 1.05x or more" "$T/gaps_trace.txt"
check "tune_gaps.py --trace lists a fallback-only bwd_dwdb key apart" \
  bash -c "sed -n '/only as the fallback/,\$p' '$T/gaps_trace.txt' | grep -q 'N=256 *b32 w16 r1 g17 *1.27x' && grep -q '^1 more bwd_dwdb keys lead' '$T/gaps_trace.txt'"
check "tune_gaps.py --trace keeps a bwd_dwdb key a pair reduces separately" \
  bash -c "sed -n '/only as the fallback/q;p' '$T/gaps_trace.txt' | grep -q 'N=256 *b32 w8 r1 g17 *1.20x'"
check "tune_gaps.py names a trace it cannot read" \
  bash -c "/usr/bin/env python3 '$root/bench/tune_gaps.py' '$T/tune.log' --trace '$T/none.trace' 2>&1 | grep -q 'cannot read the trace'"
printf 'not a report\n' > "$T/empty.log"
check "tune_gaps.py refuses a file with no key rows" bash -c "! /usr/bin/env python3 '$root/bench/tune_gaps.py' '$T/empty.log' 2>/dev/null"

[ "$fails" = 0 ] && echo "all checks passed" || echo "$fails check(s) failed"
exit $((fails > 0))
