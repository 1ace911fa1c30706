#!/usr/bin/env bash
# Call 9 (session 51). The GPU suites and the binding's pytest on s51g
# (every rule and kernel change of the session).
PYTEST=1 OUT=${OUT:-/tmp} timeout 570 bash bench/gpu_suites.sh .devbuild/s51g s51g
