#include "runtime/nvrtc.hpp"

#include <nvrtc.h>

#include <memory>
#include <sstream>

#include "templates/embedded.hpp"

namespace lntune::rt {
namespace {

struct ProgramDeleter {
  void operator()(_nvrtcProgram* p) const noexcept {
    if (p) nvrtcDestroyProgram(&p);
  }
};
using UniqueProgram = std::unique_ptr<_nvrtcProgram, ProgramDeleter>;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& o : v) s += (s.empty() ? "" : " ") + o;
  return s;
}

void check_nvrtc(nvrtcResult r, const char* what, const std::string& kernel, const std::vector<std::string>& options,
                 const std::string& log = {}) {
  if (r == NVRTC_SUCCESS) return;
  throw CompileError(std::string("lntune: ") + what + " failed for " + kernel + " (" + nvrtcGetErrorString(r) +
                         ") with options [" + join(options) + "]" + (log.empty() ? "" : ":\n" + log),
                     log, options, kernel);
}

}  // namespace

CompileError::CompileError(std::string what, std::string log, std::vector<std::string> options, std::string kernel)
    : Error(std::move(what)), log_(std::move(log)), options_(std::move(options)), kernel_(std::move(kernel)) {}

std::vector<std::string> compile_options(const std::string& arch, BinaryKind kind) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5)
    throw Error("lntune: architecture must look like sm_90, got '" + arch + "'");
  const std::string target = kind == BinaryKind::cubin ? arch : "compute_" + arch.substr(3);
  return {"--gpu-architecture=" + target, "--std=c++17", "--device-as-default-execution-space", "-lineinfo"};
}

CompiledKernel compile(const gen::KernelSource& src, const std::string& arch, BinaryKind kind) {
  const std::vector<std::string> options = compile_options(arch, kind);
  std::vector<const char*> header_text, header_names;
  for (std::string_view name : templates::kHeaderNames) {
    header_names.push_back(name.data());
    header_text.push_back(templates::get(name).data());
  }
  // Embedded texts are NUL-terminated string literals, so .data() is a C string.
  nvrtcProgram raw = nullptr;
  const std::string file = src.kernel_name + ".cu";
  check_nvrtc(nvrtcCreateProgram(&raw, src.source.c_str(), file.c_str(), static_cast<int>(header_text.size()),
                                 header_text.data(), header_names.data()),
              "nvrtcCreateProgram", src.kernel_name, options);
  UniqueProgram prog(raw);

  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(prog.get(), static_cast<int>(opts.size()), opts.data());

  CompiledKernel out;
  std::size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog.get(), &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    nvrtcGetProgramLog(prog.get(), out.log.data());
    out.log.resize(log_size - 1);
  }
  check_nvrtc(compiled, "nvrtcCompileProgram", src.kernel_name, options, out.log);

  std::size_t size = 0;
  if (kind == BinaryKind::cubin) {
    check_nvrtc(nvrtcGetCUBINSize(prog.get(), &size), "nvrtcGetCUBINSize", src.kernel_name, options);
    out.binary.resize(size);
    check_nvrtc(nvrtcGetCUBIN(prog.get(), out.binary.data()), "nvrtcGetCUBIN", src.kernel_name, options);
  } else {
    check_nvrtc(nvrtcGetPTXSize(prog.get(), &size), "nvrtcGetPTXSize", src.kernel_name, options);
    out.binary.resize(size);
    check_nvrtc(nvrtcGetPTX(prog.get(), out.binary.data()), "nvrtcGetPTX", src.kernel_name, options);
  }
  if (out.binary.empty())
    throw CompileError("lntune: NVRTC produced an empty binary for " + src.kernel_name, out.log, options,
                       src.kernel_name);
  out.kernel_name = src.kernel_name;
  out.arch = arch;
  out.kind = kind;
  out.source_hash = src.hash;
  return out;
}

std::string binary_hash(const gen::KernelSource& src, const std::string& arch, BinaryKind kind) {
  const std::string inputs = join(compile_options(arch, kind)) + "\nnvrtc " + std::to_string(nvrtc_version());
  return gen::hex(gen::fnv1a(inputs, src.hash));
}

int nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return 0;
  return major * 1000 + minor * 10;
}

std::vector<std::string> supported_archs() {
  int n = 0;
  std::vector<std::string> out;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return out;
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return out;
  for (int a : archs) out.push_back("sm_" + std::to_string(a));
  return out;
}

}  // namespace lntune::rt
