// lntune CLI: what the command groups share — option parsing into typed
// values (once, at the edge), the GPU and cache preconditions, and errors.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "lntune/types.hpp"

namespace lntune::cli {

// A subcommand and what runs it once the command line is parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

void add_tune_commands(CLI::App& app, std::vector<Command>& out);   // tune, bench, verify
void add_cache_commands(CLI::App& app, std::vector<Command>& out);  // show, export, merge, info

// The exit codes of every command (main.cpp lists them in --help).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,     // could not do the job: no GPU, a cache that cannot be read, ...
  kExitUsage = 2,       // the command line is wrong (CLI11's parse errors included)
  kExitSomeFailed = 3,  // ran to the end, but some items failed (tune: keys; verify, bench: checks)
};

// A bad option value found after parsing: exit code 2, like a parse error.
class UsageError : public Error {
 public:
  using Error::Error;
};

// "1024,2048", "512:4096:512" (START:STOP:STEP, STOP included), or a mix:
// "768,1024:4096:1024". `option` names the option in error messages.
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option);
// "fp16,bf16,fp32" (any name lntune::parse_dtype accepts).
std::vector<DType> parse_dtype_list(const std::string& text, const std::string& option);
// "fwd,bwd": fwd -> Kernel::fwd; bwd or bwd_dx -> Kernel::bwd_dx (the
// backward: bwd_dx and the bwd_dwdb after it).
std::vector<Kernel> parse_kernel_list(const std::string& text, const std::string& option);

// Throws lntune::Error("lntune: no CUDA driver: ..." / "lntune: no CUDA
// device ...") when this machine cannot run kernels.
void require_gpu();

// "--db PATH": the cache file every command uses (sets LNTUNE_CACHE, so the
// launcher's own lookups see it too).
void use_db(const std::string& path);

// The search path from the environment; nullptr with LNTUNE_CACHE=off.
std::shared_ptr<cache::CacheStack> cache_stack();

// The message as printed: "lntune: ..." (prefix added when missing).
std::string error_message(const std::exception& e);

}  // namespace lntune::cli
