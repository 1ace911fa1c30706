// lntune CLI: what the command groups share — option parsing into typed
// values (once, at the edge), the GPU and cache preconditions, and errors.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// The list parsers and validators below live in tuner/cli/parse.cpp (pure
// functions, fuzzed by tests/fuzz/fuzz_cli_list.cpp). Every error is a
// UsageError naming the option; no input overflows or allocates without bound.

// Most values one list option may give, and most problems (N x M x dtype x
// kernel) one command may name.
inline constexpr std::size_t kMaxListValues = 10000;
inline constexpr unsigned long long kMaxProblems = 100000;
// Largest N and M the library accepts (runtime/problem.cpp).
inline constexpr std::int64_t kMaxN = std::int64_t{1} << 31;
inline constexpr std::int64_t kMaxM = std::int64_t{1} << 40;

// "1024,2048", "512:4096:512" (START:STOP:STEP, STOP included), or a mix:
// "768,1024:4096:1024". Every value is in 1 .. max_value (else "<v> is out of
// range (1 .. max)"), at most kMaxListValues in all. `option` names the
// option in error messages.
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option,
                                         std::int64_t max_value = kMaxM);
// "fp16,bf16,fp32" (any name lntune::parse_dtype accepts).
std::vector<DType> parse_dtype_list(const std::string& text, const std::string& option);
// "fwd,bwd": fwd -> Kernel::fwd; bwd or bwd_dx -> Kernel::bwd_dx (the
// backward: bwd_dx and the bwd_dwdb after it).
std::vector<Kernel> parse_kernel_list(const std::string& text, const std::string& option);
// Throws UsageError if the lists name more than kMaxProblems problems.
void check_problem_count(std::size_t ns, std::size_t ms, std::size_t dtypes, std::size_t kernels);
// Throws UsageError if one workload of M x N elements (the largest of each
// list) exceeds kMaxElements: more than any GPU holds, and the bound that
// keeps every byte count of a workload far from 64-bit overflow.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
void check_workload_size(const std::vector<std::int64_t>& ns, const std::vector<std::int64_t>& ms);

// The norm-variant options of every command that names a key (issue 11):
// --op, --residual, --residual-dtype, --zero-centered, --y-dtype. Stored as
// given; check() parses and checks them all (before any GPU use), throwing a
// UsageError that names the option and the bad value.
struct VariantOptions {
  std::string op;              // --op: "layernorm", "rmsnorm" (tune, bench: a comma-separated list)
  bool residual = false;       // --residual
  std::string residual_dtype;  // --residual-dtype (needs --residual)
  bool zero_centered = false;  // --zero-centered (needs a weight)
  std::string y_dtype;         // --y-dtype

  // Registers the options on `app`; op_list: --op takes a list. op_default
  // is appended to --op's help ("default: ...").
  void add(CLI::App& app, bool op_list, const std::string& op_default = "layernorm");
  // Whether any of the options was given (tune's default grid applies only
  // when none was).
  bool given() const;
  // Parses and checks every option; has_weight: whether the problems have a
  // weight (--zero-centered needs one).
  void check(bool has_weight) const;
  // --op's norms, in the order given, without repeats (default: layernorm).
  std::vector<Norm> norms() const;
  // --residual-dtype's dtype (none: the row dtype); meaningful with --residual.
  std::optional<DType> residual_type() const;
  // `t` with the options applied: as `norm`, a residual (when --residual),
  // zero-centred gamma, the y dtype; canonical.
  Traits apply(Traits t, Norm norm) const;
  // Only --zero-centered and --y-dtype (for traits whose norm and residual
  // were set already); canonical.
  Traits apply_options(Traits t) const;
};

// CLI11 validators that check the option's text before it is converted:
// an integer in lo .. hi (CLI11's own conversion clamps out-of-range values
// to the type's limit), and a finite number > 0 (>= 0 with allow_zero; nan
// and inf are refused). Messages print the bounds as plain integers.
CLI::Validator int_range(std::int64_t lo, std::int64_t hi);
CLI::Validator finite_number(bool allow_zero);

// Throws lntune::Error("lntune: no CUDA driver: ..." / "lntune: no CUDA
// device ...") when this machine cannot run kernels.
void require_gpu();

// "--db PATH": the cache file every command uses (sets LNTUNE_CACHE, so the
// launcher's own lookups see it too).
void use_db(const std::string& path);

// The search path from the environment; nullptr with LNTUNE_CACHE=off.
std::shared_ptr<cache::CacheStack> cache_stack();

// The message as printed: "lntune: ..." (prefix added when missing), made
// terminal_text (newlines and tabs kept).
std::string error_message(const std::exception& e);

// Text from a cache file (or the file system) made safe to print on a
// terminal: control characters (C0, DEL, C1), bidirectional overrides and
// bytes that are not valid UTF-8 are shown as \xNN / \uNNNN escapes; other
// UTF-8 passes through. With keep_newlines, '\n' and '\t' are kept.
std::string terminal_text(std::string_view s, bool keep_newlines = false);
// `s` as valid UTF-8: each byte of an invalid sequence becomes U+FFFD (for
// JSON output; the JSON writer escapes control characters).
std::string utf8_text(std::string_view s);
// A copy of `r` with every text field passed through terminal_text (for
// tables) or utf8_text (for JSON).
cache::TuneRecord printable(const cache::TuneRecord& r, bool for_json);

}  // namespace lntune::cli
