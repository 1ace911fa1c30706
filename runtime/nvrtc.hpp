// NVRTC: a rendered kernel source -> CUBIN (or PTX) for one architecture.
// Needs only libnvrtc: the sources include nothing but lntune's embedded
// headers, so no CUDA toolkit headers are read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generator/instance.hpp"
#include "lntune/types.hpp"

namespace lntune::rt {

enum class BinaryKind { cubin, ptx };

struct CompiledKernel {
  std::string kernel_name;
  std::string arch;                // "sm_90"
  BinaryKind kind = BinaryKind::cubin;
  std::vector<char> binary;        // CUBIN bytes, or PTX text with its NUL
  std::string log;                 // NVRTC's log (warnings), possibly empty
  std::uint64_t source_hash = 0;
};

// Carries everything needed to reproduce the failure.
class CompileError : public Error {
 public:
  CompileError(std::string what, std::string log, std::vector<std::string> options, std::string kernel);
  const std::string& log() const { return log_; }
  const std::vector<std::string>& options() const { return options_; }
  const std::string& kernel() const { return kernel_; }

 private:
  std::string log_;
  std::vector<std::string> options_;
  std::string kernel_;
};

// arch: "sm_80", "sm_90", ... (for ptx the matching compute_XY is used).
CompiledKernel compile(const gen::KernelSource& src, const std::string& arch, BinaryKind kind = BinaryKind::cubin);

// The options compile() passes for an architecture (for logs and cache keys).
std::vector<std::string> compile_options(const std::string& arch, BinaryKind kind);

// NVRTC's version as major * 1000 + minor * 10 (CUDA's convention).
int nvrtc_version();

// The hash a compiled binary is stored under (cache::BinaryKey::source_hash):
// 16 hex digits over everything that determines the binary -- the rendered
// source (whose hash covers the templates), the exact NVRTC options for
// `arch` and `kind`, and NVRTC's version (also stored beside it).
std::string binary_hash(const gen::KernelSource& src, const std::string& arch, BinaryKind kind = BinaryKind::cubin);

// Architectures this NVRTC can target, as "sm_XY".
std::vector<std::string> supported_archs();

}  // namespace lntune::rt
