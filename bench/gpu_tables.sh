#!/usr/bin/env bash
# The benchmark tables of one build, for a device call: the tables the
# issues ask for, each step bounded by its own time limit, in an order that
# leaves the most wanted first. Session 32's call 2 lost its bandwidth table
# to the first import of lntune.torch (which builds the C++ extension)
# inside a 60 s limit, and its suites to the call's 600 s limit; this script
# builds the extension before any timed step and keeps going past a failed
# step.
#   OUT=$OUT bash bench/gpu_tables.sh DIR TAG
# DIR: a build's stripped binaries (lntune_sweep, liblntune.so). TAG names
# the logs: $OUT/<step>_TAG.log and, where the step writes one, its
# markdown table $OUT/<step>_TAG.md. Steps (TABLES="..." picks some, in this
# order; default all):
#   ext        build the binding's C++ extension (nothing timed)
#   train      M = 4096 backward kernels, dx and dW/dB, L2 flushed, defaults
#              (lntune_sweep train), fp16 / bf16 / fp32, N = 1024 ... 16384
#   bandwidth  LayerNorm at x = 512 MiB against PyTorch (bench_layernorm.py)
#   norms      RMSNorm and the fused forms at x = 512 MiB (bench_norms.py)
#   normsgrid  RMSNorm and the fused forms at M = 4096 end to end (autograd
#              through lntune.torch against PyTorch), bf16 and fp32, the
#              quick grid (N = 1024, 4096, 8192, 16384, 32768)
#   gaps       LayerNorm and RMSNorm at x = 512 MiB against PyTorch at N that no
#              power of two of 8192- or 16384-column slabs splits (20000,
#              40000, 100000, 200000: such rows fell back to tiles before
#              session 40), bf16 and fp32
#   hidden     LayerNorm and RMSNorm at x = 512 MiB against PyTorch at
#              hidden sizes of current models between the powers of two
#              (1152 ... 12288, where session 42's scan found the defaults
#              at 66-87% of copy), bf16 and fp32
#   grid       the tutorial grid at M = 4096 end to end (autograd), small M,
#              host time per call and per training step (bench_layernorm.py)
#   e2e        the grid's end-to-end backward interleaved with PyTorch's
#              (bench_host_step.py --grid; E2E_ROUNDS rounds, default 11)
# CACHE=path: a tuned cache (lntune tune --db path): the bandwidth and grid
# tables then also time the tuned kernels ("lntune (tuned)") beside the
# default heuristic; without it the cache is off and only the defaults run.
# STEP_SECONDS (default 150) bounds each step. Exit status: 0 when every
# step ran to the end, 1 otherwise (the failed steps are named on stderr),
# 2 for bad arguments.
set -uo pipefail
usage() { echo "usage: gpu_tables.sh DIR TAG (TABLES=\"ext train bandwidth norms normsgrid gaps hidden grid e2e\")" >&2; exit 2; }
[ $# -eq 2 ] || usage
[ -d "$1" ] || { echo "gpu_tables.sh: no build directory '$1'" >&2; exit 2; }
D=$(cd "$1" && pwd)
tag=$2
[[ $tag =~ ^[A-Za-z0-9._-]+$ ]] || { echo "gpu_tables.sh: TAG must be letters, digits, '.', '_' or '-', got '$tag'" >&2; exit 2; }
all="ext train bandwidth norms normsgrid gaps hidden grid e2e"
steps=${TABLES:-$all}
for s in $steps; do
  [[ " $all " == *" $s "* ]] || { echo "gpu_tables.sh: unknown step '$s' (steps: $all)" >&2; exit 2; }
done
[ -x "$D/lntune_sweep" ] || { echo "gpu_tables.sh: $D/lntune_sweep is missing" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
O=${OUT:-/tmp}
limit=${STEP_SECONDS:-150}
cache=${CACHE:-}
providers=lntune-default,torch
if [ -n "$cache" ]; then
  [ -f "$cache" ] || { echo "gpu_tables.sh: CACHE names no file: '$cache'" >&2; exit 2; }
  cache=$(cd "$(dirname "$cache")" && pwd)/$(basename "$cache")
  providers=lntune,lntune-default,torch
fi
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$D${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LNTUNE_CACHE=${cache:-off}
export LNTUNE_LIBRARY="$D/liblntune.so" PYTHONPATH="$root/python" TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/te}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failed=()
# step NAME COMMAND...: runs under the step limit, the log in $OUT.
step() {
  local name=$1
  shift
  echo "=== $name ($(date +%T))"
  timeout "$limit" "$@" > "$O/${name}_$tag.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || { failed+=("$name (exit $rc)"); echo "gpu_tables.sh: step $name failed (exit $rc)" >&2; }
  return $rc
}
# table NAME FILE: a step's markdown table into $OUT as NAME_TAG.md; a step
# that ran to the end without writing it failed too.
table() {
  cp "$2" "$O/$1_$tag.md" 2>/dev/null && return 0
  failed+=("$1 (no table)")
  echo "gpu_tables.sh: step $1 wrote no table ($2)" >&2
  return 1
}
for s in $steps; do
  case $s in
    ext)
      step ext python3 -c "import torch, lntune.torch as lt
x = torch.randn(4, 64, device='cuda', requires_grad=True)
lt.LayerNorm(64).cuda()(x).sum().backward()
print('extension', 'built' if lt._ext is not None else 'absent (ctypes path)')"
      ;;
    train)
      # shellcheck disable=SC2016  # $0 is the inner shell's
      step train bash -c 'for dt in fp16 bf16 fp32; do
        LNTUNE_SWEEP_CONFIG=default "$0/lntune_sweep" train $dt 1024 2048 4096 8192 16384 || exit; done' "$D" &&
        grep -E "^train .* M=[0-9a-z]+ +default " "$O/train_$tag.log" | awk '{print $2, $3, $6, $7, $10}'
      ;;
    bandwidth)
      step bandwidth python3 "$root/bench/bench_layernorm.py" --no-plots --section bandwidth --dtypes fp16,bf16,fp32 \
        --providers $providers --out "$T/bandwidth" && table bandwidth "$T/bandwidth/results.md"
      ;;
    norms)
      step norms python3 "$root/bench/bench_norms.py" --section bandwidth --dtypes bf16,fp32 --out "$T/norms" &&
        table norms "$T/norms/norms.md"
      ;;
    normsgrid)
      step normsgrid python3 "$root/bench/bench_norms.py" --section grid --quick --dtypes bf16,fp32 --out "$T/normsgrid" &&
        table normsgrid "$T/normsgrid/norms.md"
      ;;
    gaps)
      step gaps bash -c 'python3 "$0/bench/bench_layernorm.py" --no-plots --section bandwidth --dtypes bf16,fp32 \
        --bandwidth-ns 20000,40000,100000,200000 --providers "$1" --out "$2/gaps" &&
        python3 "$0/bench/bench_norms.py" --section bandwidth --ops rms --dtypes bf16,fp32 \
        --bandwidth-ns 20000,40000,100000,200000 --out "$2/gaps_norms"' "$root" "$providers" "$T" &&
        table gaps "$T/gaps/results.md" && table gaps_norms "$T/gaps_norms/norms.md"
      ;;
    hidden)
      step hidden bash -c 'python3 "$0/bench/bench_layernorm.py" --no-plots --section bandwidth --dtypes bf16,fp32 \
        --bandwidth-ns "$3" --providers "$1" --out "$2/hidden" &&
        python3 "$0/bench/bench_norms.py" --section bandwidth --ops rms --dtypes bf16,fp32 \
        --bandwidth-ns "$3" --out "$2/hidden_norms"' "$root" "$providers" "$T" "1152,2304,2560,4608,5120,9216,12288" &&
        table hidden "$T/hidden/results.md" && table hidden_norms "$T/hidden_norms/norms.md"
      ;;
    grid)
      step grid python3 "$root/bench/bench_layernorm.py" --no-plots --section grid,small_m,host --dtypes fp16,bf16,fp32 \
        --providers $providers --out "$T/grid" && table grid "$T/grid/results.md"
      ;;
    e2e)
      step e2e python3 "$root/bench/bench_host_step.py" --grid --rounds "${E2E_ROUNDS:-11}" --calls 10 \
        && grep -E "geomean|below" "$O/e2e_$tag.log"
      ;;
  esac
done
if ((${#failed[@]})); then
  echo "gpu_tables.sh: failed: ${failed[*]}" >&2
  exit 1
fi
exit 0
