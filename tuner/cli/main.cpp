// lntune: the command-line tool. Thin: each subcommand parses its options
// into typed values and calls the library.
#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "lntune/lntune.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/selector.hpp"
#include "tuner/cli/common.hpp"
#include "tuner/compile_process.hpp"
#include "tuner/report.hpp"

namespace {

using lntune::Config;
using lntune::DType;
using lntune::Kernel;

// Names accepted on the command line; parsed into the typed enums once, here.
const std::vector<std::string> kKernelNames = {"fwd", "bwd_dx", "bwd_dwdb"};
const std::vector<std::string> kDTypeNames = {"fp32", "fp16", "bf16"};

struct ProblemOptions {
  std::string kernel_name, dtype_name, w_dtype_name;
  Kernel kernel = Kernel::fwd;
  DType dtype = DType::f32;
  std::optional<DType> w_dtype;
  std::int64_t n = 0;
  std::int64_t m = 4096;
  bool no_weight = false, no_bias = false;
  int sm_count = 132;
  double dram_bytes_per_sm_cycle = 0;
  lntune::cli::VariantOptions variant;  // --op, --residual, --residual-dtype, --zero-centered, --y-dtype
  lntune::Norm norm = lntune::Norm::layer;

  void add(CLI::App& app) {
    app.add_option("--kernel", kernel_name, "Kernel: fwd, bwd_dx or bwd_dwdb")->required()->check(CLI::IsMember(kKernelNames));
    app.add_option("--dtype", dtype_name, "Element type of x, y, dy, dx: fp32, fp16, bf16")
        ->required()
        ->check(CLI::IsMember(kDTypeNames));
    app.add_option("--w-dtype", w_dtype_name, "Element type of weight and bias (default: --dtype; or fp32)")
        ->check(CLI::IsMember(kDTypeNames));
    app.add_option("--n", n, "Row length N (elements)")->required()->check(lntune::cli::int_range(1, lntune::cli::kMaxN));
    app.add_option("--m", m, "Rows M (bounds group_size_m)")->check(lntune::cli::int_range(1, lntune::cli::kMaxM));
    app.add_flag("--no-weight", no_weight, "LayerNorm without weight");
    app.add_flag("--no-bias", no_bias, "LayerNorm without bias (PaLM-style)");
    app.add_option("--sm-count", sm_count, "SM count of the target GPU (default: H100's 132)")
        ->check(lntune::cli::int_range(1, 4096));
    app.add_option("--dram-bytes-per-sm-cycle", dram_bytes_per_sm_cycle,
                   "DRAM bytes per SM cycle of the target GPU, bandwidth / SMs / SM clock (H100 SXM: 12.8, H200: 18.8; "
                   "default: 0, unknown, the H100's rules); from 16 on, the defaults of a GPU whose memory outruns its SMs")
        ->check(CLI::Range(0.0, 1000.0));
    variant.add(app, false);
  }
  // After parsing: names -> enums (the checks above guarantee they parse).
  void resolve() {
    kernel = *lntune::parse_kernel(kernel_name);
    dtype = *lntune::parse_dtype(dtype_name);
    if (!w_dtype_name.empty()) w_dtype = *lntune::parse_dtype(w_dtype_name);
    variant.check(!no_weight);
    const auto norms = variant.norms();
    if (norms.size() != 1) throw lntune::cli::UsageError("lntune: --op: one norm here (layernorm or rmsnorm)");
    norm = norms.front();
  }
  lntune::Traits traits() const {
    return variant.apply(lntune::Traits{kernel, dtype, w_dtype.value_or(dtype), !no_weight, !no_bias}, norm);
  }
  // What the runtime sees of a device of sm_count SMs (sm_90: every kind of
  // config is offered).
  lntune::rt::DeviceInfo device() const {
    lntune::rt::DeviceInfo d;
    d.cc_major = 9;
    d.sm_count = sm_count;
    d.dram_bytes_per_sm_cycle = dram_bytes_per_sm_cycle;
    return d;
  }
  lntune::gen::SpaceQuery query() const { return lntune::rt::space_query(device(), kernel, dtype, n, m); }
  // The default config the launcher picks for these traits on such a device,
  // at the widest vector width.
  Config default_config() const { return lntune::rt::default_selection(device(), traits(), n, m).config; }
};

int cmd_gen(const ProblemOptions& po, const std::optional<int>& block, const std::optional<int>& warps,
            const std::optional<int>& rows, const std::optional<int>& cluster, const std::optional<int>& vec,
            bool flatten) {
  Config c = po.default_config();
  if (block) c.block_size = *block;
  if (warps) c.num_warps = *warps;
  if (rows) c.rows_per_cta = *rows;
  if (cluster) c.cluster_size = *cluster;
  lntune::InstanceKey key;
  try {
    key = lntune::gen::make_instance(po.traits(), c, po.n, vec.value_or(lntune::gen::max_vec(po.dtype)));
  } catch (const lntune::Error& e) {
    // The options name a config this kernel cannot have: a usage error.
    throw lntune::cli::UsageError(e.what());
  }
  const std::string source = lntune::gen::render(key).source;
  std::cout << (flatten ? lntune::gen::flatten(source) : source);
  return 0;
}

int cmd_space(const ProblemOptions& po) {
  const auto space = lntune::gen::search_space(po.query());
  const Config def = po.default_config();
  std::cout << "# " << space.size() << " configs for " << lntune::to_string(po.kernel) << ' '
            << lntune::tune::dtype_label(po.traits()) << " N=" << po.n << " M=" << po.m << " (sm_count " << po.sm_count << ")\n";
  std::cout << "block_size num_warps rows_per_cta group_size_m cluster_size  instance\n";
  for (const Config& c : space) {
    std::string what;
    try {
      what = lntune::gen::make_instance(po.traits(), c, po.n, lntune::gen::max_vec(po.dtype)).name();
    } catch (const lntune::Error& e) {
      // The space sizes shared memory by the row dtype: a residual's slab may
      // not fit these traits (the tuner records such a config as invalid).
      what = std::string("invalid for these traits: ") + e.what();
    }
    std::printf("%10d %9d %12d %12d %12d  %s%s\n", c.block_size, c.num_warps, c.rows_per_cta, c.group_size_m,
                c.cluster_size, what.c_str(), c == def ? "  (default)" : "");
  }
  return 0;
}

int cmd_compile(const ProblemOptions& po, const std::string& arch, bool ptx, const std::string& out) {
  const Config c = po.default_config();
  const auto key = lntune::gen::make_instance(po.traits(), c, po.n, lntune::gen::max_vec(po.dtype));
  const auto src = lntune::gen::render(key);
  const auto bin = lntune::rt::compile(src, arch, ptx ? lntune::rt::BinaryKind::ptx : lntune::rt::BinaryKind::cubin);
  std::ofstream f(out, std::ios::binary);
  if (!f) throw lntune::Error("lntune: cannot write " + out);
  const std::size_t size = ptx && !bin.binary.empty() ? bin.binary.size() - 1 : bin.binary.size();
  f.write(bin.binary.data(), static_cast<std::streamsize>(size));
  if (!f) throw lntune::Error("lntune: cannot write " + out);
  std::cout << "wrote " << out << " (" << size << " bytes, " << bin.kernel_name << ", " << arch << ")\n";
  if (!bin.log.empty()) std::cout << bin.log << '\n';
  return 0;
}

// Shown under `lntune --help`; README lists the same.
const char* const kExitCodesHelp =
    "Exit codes:\n"
    "  0  success\n"
    "  1  failure: the command could not do its job (no driver or GPU, a cache file\n"
    "     that cannot be read or written, a compile error, ...); the reason is on stderr\n"
    "  2  usage error: an unknown command or option, a missing or bad option value\n"
    "  3  the command ran to the end but some items failed: tune (keys without a\n"
    "     winner; the others are stored), verify (records that fail the check),\n"
    "     bench (configs that fail the check)\n"
    "tune, bench, verify, info and show take --json: one JSON document on stdout\n"
    "(errors still go to stderr, with the exit codes above).";

}  // namespace

// `lntune _compile-worker --fd N [--nice K]`: the tune command's compile
// worker (tuner/compile_process.hpp), not for people: it answers compile
// requests on fd N until end of file.
int compile_worker_main(int argc, char** argv) {
  int fd = -1, nice = 0;
  for (int i = 2; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc || (a != "--fd" && a != "--nice")) {
      std::cerr << "lntune " << lntune::tune::kCompileWorkerCommand << ": usage: --fd N [--nice K] (got '" << a
                << "')\n";
      return lntune::cli::kExitUsage;
    }
    char* end = nullptr;
    const long v = std::strtol(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v < 0 || v > 1 << 20) {
      std::cerr << "lntune " << lntune::tune::kCompileWorkerCommand << ": " << a << " needs a number, got '"
                << argv[i + 1] << "'\n";
      return lntune::cli::kExitUsage;
    }
    (a == "--fd" ? fd : nice) = static_cast<int>(v);
  }
  if (fd < 0) {
    std::cerr << "lntune " << lntune::tune::kCompileWorkerCommand << ": --fd is required\n";
    return lntune::cli::kExitUsage;
  }
  if (nice > 0) (void)::setpriority(PRIO_PROCESS, 0, nice);
  return lntune::tune::serve_compile_requests(fd);
}

int main(int argc, char** argv) {
  using lntune::cli::kExitFailure;
  using lntune::cli::kExitUsage;
  if (argc >= 2 && std::strcmp(argv[1], lntune::tune::kCompileWorkerCommand) == 0)
    return compile_worker_main(argc, argv);
  CLI::App app{"lntune: LayerNorm kernels tuned for the GPU they run on"};
  app.name("lntune");
  app.footer(kExitCodesHelp);
  app.set_version_flag("--version", std::string("lntune ") + lntune::version());
  app.require_subcommand(1);

  ProblemOptions gen_po;
  std::optional<int> block, warps, rows, cluster, vec;
  bool flatten = false;
  auto* gen = app.add_subcommand("gen", "Print the CUDA source of one kernel instance (its constants and entry point)");
  gen_po.add(*gen);
  gen->add_option("--block-size", block, "Columns per tile (a power of two; the wide-row backward's slab and the forward's single tile in one CTA: also a multiple of the threads' accesses)");
  gen->add_option("--num-warps", warps, "Warps per CTA");
  gen->add_option("--rows-per-cta", rows, "Rows per CTA");
  gen->add_option("--vec", vec, "Elements per vector access (default: 16 bytes)");
  gen->add_option("--cluster-size", cluster, "CTAs of a thread-block cluster sharing a row (sm_90+)");
  gen->add_flag("--flatten", flatten,
                "Inline the lntune headers: one complete translation unit that NVRTC compiles by itself");
  int group_size_m = 0;
  gen->add_option("--group-size-m", group_size_m,
                  "Accepted for symmetry with tune: a launch parameter, it does not change the source")
      ->check(CLI::NonNegativeNumber);

  ProblemOptions space_po;
  auto* space = app.add_subcommand("space", "List the search space for a kernel, dtype and N");
  space_po.add(*space);

  ProblemOptions compile_po;
  std::string arch = "sm_90", out;
  bool ptx = false;
  auto* compile = app.add_subcommand("compile", "Compile the default instance with NVRTC (no GPU needed)");
  compile_po.add(*compile);
  compile->add_option("--arch", arch, "Target architecture, e.g. sm_80, sm_90");
  compile->add_flag("--ptx", ptx, "Emit PTX instead of CUBIN");
  compile->add_option("-o,--output", out, "Output file")->required();

  std::vector<lntune::cli::Command> commands;
  lntune::cli::add_tune_commands(app, commands);
  lntune::cli::add_cache_commands(app, commands);

  // An unknown command: CLI11 would only say "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->check_name(argv[1]);
    }
    if (!known) {
      std::cerr << "lntune: unknown command '" << argv[1] << "' (commands: " << names << ")\n"
                << "Run with --help for more information.\n";
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end parsing too (code 0); every other parse error
    // (CLI11's own codes, 100+) is a usage error.
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  try {
    for (const auto& c : commands)
      if (*c.app) return c.run();
    for (ProblemOptions* po : {&gen_po, &space_po, &compile_po})
      if (!po->kernel_name.empty()) po->resolve();
    if (*gen) return cmd_gen(gen_po, block, warps, rows, cluster, vec, flatten);
    if (*space) return cmd_space(space_po);
    if (*compile) return cmd_compile(compile_po, arch, ptx, out);
  } catch (const lntune::cli::UsageError& e) {
    std::cerr << lntune::cli::error_message(e) << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << lntune::cli::error_message(e) << '\n';
    return kExitFailure;
  } catch (...) {
    std::cerr << "lntune: unknown error\n";
    return kExitFailure;
  }
  return 0;
}
