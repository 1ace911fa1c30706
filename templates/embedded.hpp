// The instantiation templates and CUDA headers of templates/, embedded at build time.
#pragma once

#include <string_view>
#include <vector>

namespace lntune::templates {

struct File {
  std::string_view name;  // "fwd.cu.j2", "lntune/common.cuh", ...
  std::string_view text;
};

const std::vector<File>& files();
std::string_view get(std::string_view name);  // throws std::out_of_range

// Names of the CUDA headers that kernel sources #include (NVRTC is given
// these in memory; nothing is read from disk at run time): the shared helpers
// and argument blocks, one header per kernel family, and the tuner's
// output check (kernels/check.cuh), input fill (kernels/fill.cuh), L2
// flush (kernels/flush.cuh) and float64 reference (kernels/reference.cuh over kernels/reference_params.h).
inline constexpr std::string_view kHeaderNames[] = {
    "lntune/common.cuh",        "lntune/params.h",          "lntune/kernels/fwd.cuh",
    "lntune/kernels/fwd_cluster.cuh", "lntune/kernels/bwd_dx.cuh", "lntune/kernels/bwd_dwdb.cuh",
    "lntune/kernels/fwd_smem.cuh", "lntune/kernels/fwd_wide.cuh", "lntune/kernels/bwd_dx_wide.cuh", "lntune/kernels/check.cuh",
    "lntune/kernels/fill.cuh", "lntune/kernels/flush.cuh", "lntune/kernels/reference_params.h",
    "lntune/kernels/reference.cuh"};

// The tuner's own kernels among them (its check, fill, flush and reference): no
// instance includes them, so gen::templates_hash leaves them out (a change
// there neither makes tuned records stale nor misses the CUBIN cache).
inline constexpr std::string_view kTunerOnlyHeaders[] = {"lntune/kernels/check.cuh", "lntune/kernels/fill.cuh",
                                                         "lntune/kernels/flush.cuh",
                                                         "lntune/kernels/reference_params.h",
                                                         "lntune/kernels/reference.cuh"};

}  // namespace lntune::templates
