# Sourced first by a device call's script (bench/results/*/scripts/runN.sh,
# run from the repository root): strict mode, B (the carried builds,
# .devbuild), O (the folder that comes back: $OUT, else /tmp), s "step" (a
# timestamped header), the GPU's name and driver on stdout, and the cache
# off (the default heuristic unless a step asks for a cache). The per-call
# scripts copied these lines each time until session 34.
#   source bench/gpu_call.sh
set -uo pipefail
B=$PWD/.devbuild
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LNTUNE_CACHE=off
