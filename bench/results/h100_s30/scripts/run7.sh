#!/usr/bin/env bash
# Call 7: the binding's pytest (CUDA graphs included) on s30f = 3454bb0, the
# session's last kernel change (liblntune.so only: the gtest suites ran in
# call 6).
set -uo pipefail
PYTEST=1 bash bench/gpu_suites.sh $PWD/.devbuild/s30p call7
