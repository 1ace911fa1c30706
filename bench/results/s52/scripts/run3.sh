#!/usr/bin/env bash
# Call 3 (session 52). The GPU suites (gtest and the binding's pytest) on
# main with calls 1-2's rules (s52d, 04c00a2).
set -uo pipefail
PYTEST=1 OUT=${OUT:-/tmp} timeout 570 bash bench/gpu_suites.sh .devbuild/s52d s52d
