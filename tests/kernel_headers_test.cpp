// The kernel headers (templates/kernels/*.cuh) compile with NVRTC directly,
// without rendering any template: each header on its own, and a translation
// unit per kernel family that includes only its header and instantiates
// representative shapes (every dtype pair, weight/bias on and off, single tile
// and tiled, several rows per CTA, clusters on sm_90), to CUBIN for sm_80 and
// sm_90. Also: `gen::flatten` yields a translation unit that compiles with no
// headers at all. No GPU needed.
#include <gtest/gtest.h>

#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "templates/embedded.hpp"

namespace lntune {
namespace {

struct ProgramDeleter {
  void operator()(_nvrtcProgram* p) const noexcept {
    if (p) nvrtcDestroyProgram(&p);
  }
};

struct Compiled {
  bool ok = false;
  std::string log;
  std::string ptx;
  std::size_t cubin_bytes = 0;
};

// Compiles `source` to CUBIN (and PTX, to look for the entries) with the
// options the runtime uses. `with_headers`: give NVRTC the embedded lntune
// headers, as the runtime does; otherwise none at all.
Compiled nvrtc(const std::string& source, const std::string& arch, bool with_headers = true,
               const std::vector<std::string>& extra = {}) {
  std::vector<const char*> names, texts;
  if (with_headers)
    for (std::string_view name : templates::kHeaderNames) {
      names.push_back(name.data());
      texts.push_back(templates::get(name).data());
    }
  nvrtcProgram raw = nullptr;
  Compiled out;
  if (nvrtcCreateProgram(&raw, source.c_str(), "kernel_headers_test.cu", static_cast<int>(names.size()), texts.data(),
                         names.data()) != NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  std::unique_ptr<_nvrtcProgram, ProgramDeleter> prog(raw);
  const std::string target = "--gpu-architecture=" + arch;
  std::vector<const char*> opts = {target.c_str(), "--std=c++17", "--device-as-default-execution-space", "-lineinfo"};
  for (const std::string& e : extra) opts.push_back(e.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog.get(), static_cast<int>(opts.size()), opts.data());
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(prog.get(), &size) == NVRTC_SUCCESS && size > 1) {
    out.log.resize(size);
    nvrtcGetProgramLog(prog.get(), out.log.data());
  }
  if (r != NVRTC_SUCCESS) return out;
  if (nvrtcGetCUBINSize(prog.get(), &out.cubin_bytes) != NVRTC_SUCCESS) return out;
  if (nvrtcGetPTXSize(prog.get(), &size) == NVRTC_SUCCESS && size > 1) {
    out.ptx.resize(size);
    nvrtcGetPTX(prog.get(), out.ptx.data());
  }
  out.ok = out.cubin_bytes > 0;
  return out;
}

const char* type_of(DType d) {
  switch (d) {
    case DType::f32: return "float";
    case DType::f16: return "lntune::half_t";
    case DType::bf16: return "lntune::bf16_t";
  }
  return "?";
}

const char* b(bool v) { return v ? "true" : "false"; }

// One instantiation of a row kernel (forward, forward over a cluster, backward dx).
struct RowCase {
  DType x, w;
  bool weight, bias;
  int block, warps, rows, vec;
  bool single;
  int cluster;
  // The variant (issue 11); defaults: LayerNorm without options.
  Norm norm = Norm::layer;
  std::optional<DType> residual = std::nullopt;
  bool zero_centered = false;
  std::optional<DType> out = std::nullopt;
};

std::string row_shape(const RowCase& c) {
  std::string s = "lntune::RowShape<" + std::string(type_of(c.x)) + ", " + type_of(c.w) + ", " +
                  std::to_string(c.block) + ", " + std::to_string(c.warps) + ", " + std::to_string(c.rows) + ", " +
                  std::to_string(c.vec) + ", " + b(c.weight) + ", " + b(c.bias) + ", " + b(c.single) + ", " +
                  std::to_string(c.cluster);
  if (c.norm != Norm::layer || c.residual || c.zero_centered || c.out)
    s += std::string(", ") + (c.norm == Norm::rms ? "lntune::kRmsNorm" : "lntune::kLayerNorm") + ", " +
         (c.residual ? type_of(*c.residual) : "void") + ", " + b(c.zero_centered) + ", " + type_of(c.out.value_or(c.x));
  return s + ">";
}

// Every variant (norm x residual none/same/fp32 x zero-centred x output
// dtype) on the geometry of `base`.
std::vector<RowCase> variants_of(const RowCase& base) {
  std::vector<RowCase> out;
  for (Norm norm : {Norm::layer, Norm::rms})
    for (int r = 0; r < 3; ++r)
      for (bool zc : {false, true})
        for (bool other_out : {false, true}) {
          RowCase c = base;
          c.norm = norm;
          if (r == 1) c.residual = c.x;
          if (r == 2) c.residual = DType::f32;
          c.zero_centered = zc && c.weight;
          if (other_out) c.out = c.x == DType::f32 ? DType::bf16 : DType::f32;
          out.push_back(c);
        }
  return out;
}

// A translation unit: the header, then one extern "C" kernel per case.
// `more_targs`: template arguments after the shape (e.g. ", false").
std::string row_unit(const std::string& header, const std::string& function, const std::string& params,
                     const std::vector<RowCase>& cases, const std::string& more_targs = "") {
  std::string s = "#include \"lntune/kernels/" + header + "\"\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string shape = "S" + std::to_string(i);
    s += "using " + shape + " = " + row_shape(cases[i]) + ";\n";
    s += "extern \"C\" __global__ void __launch_bounds__(" + shape + "::kThreads)";
    if (cases[i].cluster > 1) s += " __cluster_dims__(" + std::to_string(cases[i].cluster) + ", 1, 1)";
    s += " k" + std::to_string(i) + "(const lntune::" + params + " p) { lntune::" + function + "<" + shape + more_targs + ">(p); }\n";
  }
  return s;
}

void expect_compiles(const std::string& what, const std::string& source, std::size_t kernels,
                     const std::vector<std::string>& archs) {
  for (const std::string& arch : archs) {
    const Compiled c = nvrtc(source, arch);
    ASSERT_TRUE(c.ok) << what << " for " << arch << ":\n" << c.log << "\n--- source:\n" << source;
    for (std::size_t i = 0; i < kernels; ++i)
      EXPECT_NE(c.ptx.find(".entry k" + std::to_string(i) + "("), std::string::npos) << what << " " << arch << " k" << i;
  }
}

constexpr DType f32 = DType::f32, f16 = DType::f16, bf16 = DType::bf16;

TEST(KernelHeaders, EachHeaderCompilesOnItsOwn) {
  int headers = 0;
  for (const auto& f : templates::files()) {
    const std::string name(f.name);
    if (name.rfind("lntune/", 0) != 0) continue;  // an instantiation template
    ++headers;
    for (const char* arch : {"sm_80", "sm_90"}) {
      const Compiled c = nvrtc("#include \"" + name + "\"\n", arch);
      EXPECT_TRUE(c.ok) << name << " alone, " << arch << ":\n" << c.log;
    }
  }
  EXPECT_EQ(headers, static_cast<int>(std::size(templates::kHeaderNames)));
}

// The tuner's float64 reference (kernels/reference.cuh): every entry is
// there, and no double operation is fused into an FMA (each is an _rn
// intrinsic, so that the reference rounds as it says, whatever the
// compiler's contraction): the PTX has double adds and multiplies and no
// fma.rn.f64.
TEST(KernelHeaders, ReferenceKernelsRoundEveryDoubleOperation) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    const Compiled c = nvrtc("#include \"lntune/kernels/reference.cuh\"\n", arch);
    ASSERT_TRUE(c.ok) << arch << ":\n" << c.log;
    for (const char* entry : {"lntune_ref_fwd_g32", "lntune_ref_fwd_g256", "lntune_ref_bwd_g32", "lntune_ref_bwd_g256",
                              "lntune_ref_dwdb_partials", "lntune_ref_dwdb_sum"})
      EXPECT_NE(c.ptx.find(std::string(".entry ") + entry + "("), std::string::npos) << arch << " " << entry;
    EXPECT_NE(c.ptx.find("add.rn.f64"), std::string::npos) << arch;
    EXPECT_NE(c.ptx.find("mul.rn.f64"), std::string::npos) << arch;
    EXPECT_NE(c.ptx.find("sqrt.rn.f64"), std::string::npos) << arch;
    EXPECT_EQ(c.ptx.find("fma.rn.f64"), std::string::npos) << arch << ": a fused double operation";
  }
}

TEST(KernelHeaders, ForwardInstantiations) {
  // dtypes (x, w) x weight/bias, single tile and tiled, rows per CTA, vec.
  const std::vector<RowCase> cases = {
      {f32, f32, true, true, 1024, 4, 1, 4, true, 1},     {f16, f16, true, false, 256, 4, 4, 8, true, 1},
      {bf16, bf16, false, true, 8192, 16, 1, 8, false, 1}, {bf16, f32, false, false, 4096, 8, 1, 1, true, 1},
      {f16, f32, true, true, 4096, 8, 1, 8, false, 1},    {f32, f32, false, false, 8192, 16, 1, 4, false, 1},
      {bf16, bf16, true, true, 128, 2, 2, 4, true, 1},    {f16, f16, false, true, 64, 1, 1, 2, true, 1},
  };
  expect_compiles("fwd.cuh", row_unit("fwd.cuh", "layer_norm_fwd", "FwdParams", cases), cases.size(),
                  {"sm_80", "sm_90"});
}

TEST(KernelHeaders, ForwardClusterInstantiations) {
  const std::vector<RowCase> cases = {
      {bf16, bf16, true, true, 16384, 16, 1, 8, true, 4},
      {f32, f32, false, false, 4096, 8, 1, 4, true, 2},
      {f16, f32, true, false, 8192, 8, 1, 8, true, 8},
  };
  const std::string unit = row_unit("fwd_cluster.cuh", "layer_norm_fwd_cluster", "FwdParams", cases);
  expect_compiles("fwd_cluster.cuh", unit, cases.size(), {"sm_90"});
  EXPECT_FALSE(nvrtc(unit, "sm_80").ok) << "clusters need sm_90";
}

TEST(KernelHeaders, BackwardDxInstantiations) {
  const std::vector<RowCase> cases = {
      {f32, f32, true, true, 2048, 8, 1, 4, true, 1},     {f16, f16, true, false, 512, 8, 8, 8, true, 1},
      {bf16, f32, false, true, 4096, 16, 1, 8, true, 1},  {bf16, bf16, true, true, 4096, 8, 1, 8, false, 1},
      {f32, f32, false, false, 4096, 8, 1, 4, false, 1},  {f16, f32, true, false, 8192, 16, 1, 1, false, 1},
      {bf16, bf16, false, false, 64, 1, 2, 2, true, 1},
  };
  expect_compiles("bwd_dx.cuh", row_unit("bwd_dx.cuh", "layer_norm_bwd_dx", "BwdParams", cases, ", false"),
                  cases.size(), {"sm_80", "sm_90"});
  // The entry that also finishes dW/dB: CTAs under 512 threads, no cluster.
  std::vector<RowCase> finishing;
  for (const RowCase& c : cases)
    if (32 * c.warps < 512) finishing.push_back(c);
  ASSERT_EQ(finishing.size(), 5u);
  expect_compiles("bwd_dx.cuh (finishing dW/dB)",
                  row_unit("bwd_dx.cuh", "layer_norm_bwd_dx", "BwdParams", finishing, ", true"), finishing.size(),
                  {"sm_80", "sm_90"});
  const std::vector<RowCase> clusters = {
      {bf16, bf16, true, true, 8192, 16, 1, 8, true, 8},
      {f32, f32, false, true, 4096, 8, 1, 4, true, 2},
      {f16, f32, true, false, 2048, 4, 1, 8, true, 4},
  };
  expect_compiles("bwd_dx.cuh (clusters)", row_unit("bwd_dx.cuh", "layer_norm_bwd_dx", "BwdParams", clusters, ", false"),
                  clusters.size(), {"sm_90"});
}

// The wide-row backward (bwd_dx_wide.cuh): every variant (norm x residual
// none/same/fp32 x zero-centred x output dtype) and dtype pair, sm_90 only;
// x fp32 with a 16-bit residual or dy is not a wide shape (8-byte accesses).
TEST(KernelHeaders, BackwardDxWideInstantiations) {
  auto unit = [](const std::vector<RowCase>& cases) {
    std::string s = "#include \"lntune/kernels/bwd_dx_wide.cuh\"\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const RowCase& c = cases[i];
      const std::string shape = "S" + std::to_string(i);
      s += "using " + shape + " = lntune::WideShape<" + type_of(c.x) + ", " + type_of(c.w) + ", " +
           std::to_string(c.block) + ", " + std::to_string(c.warps) + ", " + std::to_string(c.rows) + ", " +
           std::to_string(c.vec) + ", " + b(c.weight) + ", " + b(c.bias) + ", " + std::to_string(c.cluster) + ", " +
           (c.norm == Norm::rms ? "lntune::kRmsNorm" : "lntune::kLayerNorm") + ", " +
           (c.residual ? type_of(*c.residual) : "void") + ", " + b(c.zero_centered) + ", " +
           type_of(c.out.value_or(c.x)) + ">;\n";
      s += "extern \"C\" __global__ void __launch_bounds__(" + shape + "::kThreads) __cluster_dims__(" +
           std::to_string(c.cluster) + ", 1, 1) k" + std::to_string(i) + "(const lntune::BwdParams p) { " +
           "lntune::layer_norm_bwd_dx_wide<" + shape + ">(p); }\n";
    }
    return s;
  };
  std::vector<RowCase> cases;
  for (const RowCase& v : variants_of(RowCase{bf16, bf16, true, true, 8192, 16, 3, 8, true, 8})) cases.push_back(v);
  cases.push_back(RowCase{f16, f32, true, false, 16384, 32, 2, 8, true, 16});
  for (const RowCase& v : variants_of(RowCase{f32, f32, true, true, 8192, 16, 2, 4, true, 8}))
    if ((!v.residual || *v.residual == f32) && (!v.out || *v.out == f32)) cases.push_back(v);
  cases.push_back(RowCase{bf16, f32, false, true, 4096, 8, 4, 8, true, 4});
  cases.push_back(RowCase{f32, f32, false, false, 8192, 8, 2, 4, true, 2});
  expect_compiles("bwd_dx_wide.cuh", unit(cases), cases.size(), {"sm_90"});
  EXPECT_FALSE(nvrtc(unit({cases.back()}), "sm_80").ok) << "clusters and bulk copies need sm_90";
}

// Compiles each instance for sm_90 (eight at a time) and fails for any that
// does not compile or spills more than `most` bytes of registers.
void expect_no_spills(const std::vector<InstanceKey>& keys, long most = 0) {
  auto check = [most](const InstanceKey& key) {
    const gen::KernelSource src = gen::render(key);
    const Compiled c = nvrtc(src.source, "sm_90", true, {"--ptxas-options=-v"});
    if (!c.ok) return src.kernel_name + ": does not compile:\n" + c.log;
    const std::string::size_type at = c.log.find(" bytes spill stores");
    if (at == std::string::npos) return src.kernel_name + ": no spill line in ptxas's log:\n" + c.log;
    const std::string::size_type from = c.log.rfind(' ', at - 1) + 1;
    const long spilled = std::stol(c.log.substr(from, at - from));
    if (spilled > most) return src.kernel_name + ": spills " + std::to_string(spilled) + " bytes:\n" + c.log;
    if (spilled > 0) std::printf("[ spills   ] %s: %ld bytes (allowed here)\n", src.kernel_name.c_str(), spilled);
    return std::string();
  };
  for (std::size_t first = 0; first < keys.size(); first += 8) {
    std::vector<std::future<std::string>> jobs;
    for (std::size_t i = first; i < std::min(keys.size(), first + 8); ++i)
      jobs.push_back(std::async(std::launch::async, check, keys[i]));
    for (auto& j : jobs) {
      const std::string problem = j.get();
      EXPECT_TRUE(problem.empty()) << problem;
    }
  }
}

// Every wide-row backward and wide-row forward config of the search space,
// rendered by the generator, compiles for sm_90 with no spills (ptxas -v
// through NVRTC), for each dtype at N = 4096, 8192, 9216 and 10240 (the
// backward's equal slabs: 2 of 6144 for 16-bit rows, 3 for fp32 in 4 warps
// too), 20480 (a partial last
// slab; clusters of 3), 65536, 100000 (clusters of 7 and 13), 150000 and
// 180000 (the backward's slabs of other than a power of two: 13 and 15 of
// 12288 columns for 16-bit rows, 15 of 10240 and of 12288 for fp32, the
// last in 32 warps too) and 262144; the
// backward also with a residual in x's dtype (the fused kernels' own space); the forward also with an fp32 residual
// (with RMSNorm's zero-centred fp32 weight for 16-bit rows; fp32 rows at 256K
// columns read it unstaged).
TEST(KernelHeaders, WideSpaceCompilesWithoutSpills) {
  std::vector<InstanceKey> keys;
  int forward = 0;
  for (Kernel k : {Kernel::bwd_dx, Kernel::fwd})
    for (DType d : {f32, f16, bf16})
      for (std::int64_t n : {4096, 8192, 9216, 10240, 20480, 65536, 100000, 150000, 180000, 262144}) {
        std::vector<Traits> traits{Traits{k, d, d, true, true}};
        if (k == Kernel::fwd && d != f32) {
          Traits r{k, d, f32, true, false};
          r.norm = Norm::rms;
          r.residual = f32;
          r.zero_centered = true;
          traits.push_back(r);
        }
        if (k == Kernel::bwd_dx) {  // the fused backward (dz in pass B; preloaded up to 16 warps)
          Traits r{k, d, d, true, true};
          r.residual = d;
          traits.push_back(r);
        }
        if (k == Kernel::fwd && d == f32) {  // at 256K columns, the residual not staged
          Traits r{k, d, d, true, true};
          r.residual = f32;
          traits.push_back(r);
        }
        for (const Traits& t : traits) {
          gen::SpaceQuery q{k, d, n, 4096, 132, 90};
          q.residual = t.residual.has_value();  // (the space of the fused kernels has rules of its own)
          for (const Config& c : gen::search_space(q)) {
            if (!gen::is_wide_bwd(k, c) && !gen::is_wide_fwd(k, c)) continue;
            InstanceKey key;
            try {
              key = gen::make_instance(t, c, n, gen::max_vec(d));
            } catch (const Error& e) {
              // The space sizes shared memory with the row dtype: an fp32
              // residual's slab may not fit.
              EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << e.what();
              continue;
            }
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
              keys.push_back(key);
              forward += k == Kernel::fwd;
            }
          }
        }
      }
  ASSERT_GE(keys.size() - forward, 20u);
  ASSERT_GE(forward, 20);
  const auto fine = std::count_if(keys.begin(), keys.end(),
                                  [](const InstanceKey& k) { return (k.block_size & (k.block_size - 1)) != 0; });
  EXPECT_GE(fine, 6) << "the backward's slabs of other than a power of two (gen::wide_bwd_fine_split)";
  expect_no_spills(keys);
  std::printf("[ wide     ] %zu wide-row instances compiled (%d forward, %d in slabs of other than a power of two), "
              "no spills\n",
              keys.size(), forward, static_cast<int>(fine));
}

// The single tiles of other than a power of two (gen::is_odd_tile) in kernel
// k's space at (d, norm, n) over 65536 rows of a 132-SM sm_90 GPU, and the traits they are instances of (a weight; a bias
// for LayerNorm).
struct OddTiles {
  Traits traits;
  std::vector<Config> configs;
};
OddTiles odd_tiles(Kernel k, DType d, Norm norm, std::int64_t n) {
  OddTiles out{Traits{k, d, d, true, norm == Norm::layer}, {}};
  out.traits.norm = norm;
  gen::SpaceQuery q{k, d, n, 65536, 132, 90};
  q.norm = norm;
  for (const Config& c : gen::search_space(q))
    if (gen::is_odd_tile(c) && !gen::has_segmented_rows(k, c)) out.configs.push_back(c);
  return out;
}

// The configs of kernel k's space whose rows are other than a power of two
// of threads (gen::has_segmented_rows, session 44; not counted above).
std::vector<Config> segmented_rows(Kernel k, DType d, Norm norm, std::int64_t n) {
  gen::SpaceQuery q{k, d, n, 65536, 132, 90};
  q.norm = norm;
  std::vector<Config> out;
  for (const Config& c : gen::search_space(q))
    if (gen::has_segmented_rows(k, c)) out.push_back(c);
  return out;
}

// The forward's single tiles of other than a power of two (search_space,
// session 42), in registers or a slab in shared memory, compile for sm_90
// with no spills at N = 1152, 2560, 4608, 5120, 9216 and 12288, 16-bit and
// fp32 rows, LayerNorm and RMSNorm.
TEST(KernelHeaders, ForwardTilesOfAnyMultipleCompileWithoutSpills) {
  std::vector<InstanceKey> keys;
  for (DType d : {f32, bf16})
    for (Norm norm : {Norm::layer, Norm::rms})
      for (std::int64_t n : {1152, 2560, 4608, 5120, 9216, 12288}) {
        const OddTiles tiles = odd_tiles(Kernel::fwd, d, norm, n);
        for (const Config& c : tiles.configs) {
          const InstanceKey key = gen::make_instance(tiles.traits, c, n, gen::max_vec(d));
          if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        }
      }
  ASSERT_GE(keys.size(), 40u);
  expect_no_spills(keys);
  std::printf("[ tiles    ] %zu forward tiles of other than a power of two compiled, no spills\n", keys.size());
}

// ... and the forward's rows of other than a power of two of threads (in
// registers: 1152 bf16 columns in rows of 48 threads, two a CTA of 3 warps).
TEST(KernelHeaders, ForwardSegmentedRowsCompileWithoutSpills) {
  std::vector<InstanceKey> keys;
  for (DType d : {f32, bf16})
    for (Norm norm : {Norm::layer, Norm::rms})
      for (std::int64_t n : {1152, 1280, 2560, 4608}) {
        Traits t{Kernel::fwd, d, d, true, norm == Norm::layer};
        t.norm = norm;
        for (const Config& c : segmented_rows(Kernel::fwd, d, norm, n)) {
          const InstanceKey key = gen::make_instance(t, c, n, gen::max_vec(d));
          if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        }
      }
  ASSERT_GE(keys.size(), 20u);
  expect_no_spills(keys);
  std::printf("[ segments ] %zu forward configs in rows of other than a power of two of threads, no spills\n",
              keys.size());
}

// The most bytes any entry of `key`'s kernel spills (ptxas -v through
// NVRTC, every entry: the backward's finishing entry too); -1 where it does
// not compile.
long most_spilled(const InstanceKey& key) {
  const Compiled c = nvrtc(gen::render(key).source, "sm_90", true, {"--ptxas-options=-v"});
  if (!c.ok) return -1;
  long most = 0;
  for (std::string::size_type at = c.log.find(" bytes spill stores"); at != std::string::npos;
       at = c.log.find(" bytes spill stores", at + 1)) {
    const std::string::size_type from = c.log.rfind(' ', at - 1) + 1;
    most = std::max(most, std::stol(c.log.substr(from, at - from)));
  }
  return most;
}

// Each pair's first instance compiles and spills no more than its second
// (a power of two beside it), every entry's most (most_spilled).
void expect_no_more_spills(const std::vector<std::pair<InstanceKey, InstanceKey>>& pairs) {
  std::vector<std::future<std::pair<long, long>>> jobs;
  for (const auto& [key, pow2] : pairs)
    jobs.push_back(std::async(std::launch::async, [key = key, pow2 = pow2] {
      return std::make_pair(most_spilled(key), most_spilled(pow2));
    }));
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto [key, pow2] = jobs[i].get();
    SCOPED_TRACE(pairs[i].first.name() + " beside " + pairs[i].second.name());
    EXPECT_GE(key, 0) << "does not compile";
    EXPECT_GE(pow2, 0) << "the power of two does not compile";
    EXPECT_LE(key, pow2);
  }
}

// The backward's single tiles of other than a power of two (search_space,
// session 43; registers, at most 16 elements a thread, 16-byte accesses)
// compile for sm_90 and spill no more than the power-of-two tile of the
// same threads they stand beside, at N = 1152-5120, bf16 and fp32 rows
// (16-bit rows have none there: 16-byte accesses would pass 16 elements a
// thread), LayerNorm and RMSNorm. (In 8-byte accesses fp32 RMSNorm's 3072
// in 16 warps spilled 8 bytes where 4096 spilled none.)
TEST(KernelHeaders, BackwardTilesSpillNoMoreThanThePowerOfTwo) {
  std::vector<std::pair<InstanceKey, InstanceKey>> pairs;
  for (DType d : {f32, bf16})
    for (Norm norm : {Norm::layer, Norm::rms})
      for (std::int64_t n : {1152, 1280, 2304, 2560, 4608, 5120}) {
        const OddTiles tiles = odd_tiles(Kernel::bwd_dx, d, norm, n);
        const Traits& t = tiles.traits;
        for (const Config& c : tiles.configs) {
          Config pow2 = c;
          pow2.block_size = static_cast<int>(gen::next_pow2(n));
          if (pow2.block_size / pow2.threads_per_row() > gen::max_items_per_thread(Kernel::bwd_dx, pow2.num_warps))
            pow2.num_warps *= 2;  // the power of two's registers: twice the threads
          const InstanceKey key = gen::make_instance(t, c, n, gen::max_vec(d));
          if (std::none_of(pairs.begin(), pairs.end(), [&key](const auto& p) { return p.first == key; }))
            pairs.emplace_back(key, gen::make_instance(t, pow2, n, gen::max_vec(d)));
        }
      }
  ASSERT_GE(pairs.size(), 6u);  // three a norm: 1536 in 4 warps, 3072 in 8, 6144 in 16
  expect_no_more_spills(pairs);
  std::printf("[ tiles    ] %zu backward tiles of other than a power of two compiled\n", pairs.size());
}

// The backward in rows of other than a power of two of threads (exactly N
// columns: 1152 bf16 in rows of 144 threads, two a CTA of 9 warps) spills
// no more than the power of two of warps and rows with the same elements a
// thread (1152 in 9 warps of 2 rows beside 2048 in 16 of 2).
TEST(KernelHeaders, BackwardSegmentedRowsSpillNoMoreThanThePowerOfTwo) {
  std::vector<std::pair<InstanceKey, InstanceKey>> pairs;
  for (DType d : {f32, bf16})
    for (std::int64_t n : {1152, 2560, 4608}) {
      const Traits t{Kernel::bwd_dx, d, d, true, true};
      for (const Config& c : segmented_rows(Kernel::bwd_dx, d, Norm::layer, n)) {
        Config pow2 = c;
        pow2.block_size = static_cast<int>(gen::next_pow2(n));
        pow2.num_warps = static_cast<int>(gen::next_pow2(c.num_warps));
        pow2.rows_per_cta = static_cast<int>(gen::next_pow2(c.rows_per_cta));
        if (pow2.block_size / pow2.threads_per_row() > gen::max_items_per_thread(Kernel::bwd_dx, pow2.num_warps)) {
          pow2.num_warps /= 2;  // 32 warps hold half the elements: half the CTA, the same row
          pow2.rows_per_cta /= 2;
        }
        const InstanceKey key = gen::make_instance(t, c, n, gen::max_vec(d));
        if (std::none_of(pairs.begin(), pairs.end(), [&key](const auto& p) { return p.first == key; }))
          pairs.emplace_back(key, gen::make_instance(t, pow2, n, gen::max_vec(d)));
      }
    }
  ASSERT_GE(pairs.size(), 10u);
  expect_no_more_spills(pairs);
  std::printf("[ segments ] %zu backward configs in rows of other than a power of two of threads compiled\n",
              pairs.size());
}

// The fused backward's single-tile kernel holds dz in registers beside x and
// dy (loaded together, so that dz's latency hides behind theirs): the config
// that each fused shape runs untuned must still fit its registers, up to a
// few bytes: ptxas spilled 4-8 bytes in RMSNorm + add's 1024-thread CTAs (64
// registers, 8 columns a thread; 96.6-101.7% of copy, bench/results/
// h100_2026-11-25b, calls 2-4) and beside an fp32 residual at N = 8192.
// (Parts of the space spilled before dz moved, e.g. 1024-thread CTAs holding
// 16 columns of an fp32 residual's row; the tuner times those like any other
// config.) Since session 45 the rows are staged in shared memory on sm_90
// (z, dy and dz): the defaults of both GPUs' rules, the H100's and the
// H200's (its fp32 row of 8192 columns in 16 warps, 192 KB staged; its rows
// of other than a power of two of threads at 2304-5120 columns; since
// session 46 the wide kernel's dz staged at 12288-262144 columns; since
// session 47 16-bit rows beside an fp32 residual stream at 16384-262144 in
// their own rule: before, 16384-column slabs in 32 warps there spilled 36
// bytes).
TEST(KernelHeaders, FusedBackwardDefaultsCompileWithoutSpills) {
  std::vector<InstanceKey> keys;
  int single_tile = 0, segmented = 0, staged_over_96k = 0, staged_dz = 0;
  for (DType d : {f32, f16, bf16})
    for (DType r : {d, f32}) {
      if (d == f32 && r != d) continue;
      for (std::int64_t n : {256, 512, 1000, 1024, 2048, 2304, 2560, 4096, 4608, 5000, 5120, 6144, 8192, 12288, 16384,
                             32768, 65536, 131072, 262144})
        for (Norm norm : {Norm::layer, Norm::rms}) {
          Traits t{Kernel::bwd_dx, d, d, true, norm == Norm::layer};
          t.norm = norm;
          t.residual = r;
          const int vec = n % gen::max_vec(d) == 0 ? gen::max_vec(d) : 1;
          const gen::ConfigFilter valid = gen::instances_for(t, n, vec);
          // Training rows, and the bandwidth regime's (512 MiB of x).
          const std::int64_t bandwidth_m = (std::int64_t{512} << 20) / (n * static_cast<std::int64_t>(dtype_size(d)));
          for (std::int64_t m : {std::int64_t{4096}, bandwidth_m})
            for (double bpc : {0.0, 18.8}) {  // the H100's rules, the H200's
              // The H100's rule for 16-bit rows beside an fp32 residual
              // stream at 32768 and 262144 columns (16384-column slabs, 32
              // warps, 2 stages) spills 36 bytes: the H200's has its own
              // since session 47 (8192-column slabs in 8 warps; 16 warps at
              // 262144), the H100's awaits a sweep there
              // (bench/GPU_CHECKLIST.md).
              if (r != d && bpc == 0.0 && (n == 32768 || n == 262144)) continue;
              gen::SpaceQuery q{Kernel::bwd_dx, d, n, m, 132, 90};
              q.residual = true;
              q.norm = norm;
              q.dram_bytes_per_sm_cycle = bpc;
              const Config c = gen::default_config(q, valid);
              const InstanceKey key = gen::make_instance(t, c, n, vec);
              if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
              keys.push_back(key);
              single_tile += !gen::is_wide_bwd(Kernel::bwd_dx, c);
              segmented += gen::has_segmented_rows(key);
              staged_over_96k += gen::bwd_stage_bytes(key, 90) > gen::kMaxBwdStageBytes;
              staged_dz += gen::is_wide_bwd(key) && gen::wide_stages_dz(key);
            }
        }
    }
  ASSERT_GE(single_tile, 40);
  EXPECT_GE(segmented, 6) << "the H200's fused rows of other than a power of two of threads";
  EXPECT_GE(staged_over_96k, 2) << "the H200's fp32 + add rows of 8192 columns in 16 warps";
  EXPECT_GE(staged_dz, 10) << "the wide kernel's dz staged (the H200's 16-bit defaults at 12288-262144)";
  expect_no_spills(keys, 8);
  std::printf("[ fused    ] %zu default fused backward instances (%d single-tile, %d segmented, %d staging over 96 KB, "
              "%d wide with dz staged) compiled, none spilling more than 8 bytes\n",
              keys.size(), single_tile, segmented, staged_over_96k, staged_dz);
}

// The backward defaults at training sizes (16-48 rows a SM on 132 SMs, the
// H200's rules and the H100's) whose instances have the entry that
// finishes dW/dB in the kernel (CTAs under 512 threads): no entry spills
// more than the 24 bytes that finish_dwdb (not inlined) saves and restores
// once where the kernel has no bias (ptxas: the same 24 bytes at any
// unroll of the finish by warps, 10-16 rows a lane; 16 bytes with the
// 8-row form before session 49, which also spilled 16 with a bias, now
// none). Plain LayerNorm and RMSNorm, the fused add in x's dtype and
// beside an fp32 stream, fp32.
TEST(KernelHeaders, TrainingBackwardFinishCompilesWithoutSpills) {
  std::vector<InstanceKey> keys;
  for (DType d : {f32, f16, bf16})
    for (int form = 0; form < 3; ++form) {  // plain, + add in x's dtype, + add beside fp32
      if (d == f32 && form == 2) continue;
      // 2560 and 3584: CTAs of 257-511 threads (10 and 14 warps, a CTA an
      // SM), whose register bound session 51's first bwd_min_ctas for the
      // finish halved (two CTAs' worth: 73 registers at 14 warps, the M =
      // 4096 backward at 3584 columns 67 -> 26% of copy end to end).
      for (std::int64_t n : {512, 768, 1000, 1024, 2048, 2560, 3584})
        for (Norm norm : {Norm::layer, Norm::rms}) {
          Traits t{Kernel::bwd_dx, d, d, true, norm == Norm::layer};
          t.norm = norm;
          if (form > 0) t.residual = form == 1 ? d : f32;
          const int vec = n % gen::max_vec(d) == 0 ? gen::max_vec(d) : 1;
          const gen::ConfigFilter valid = gen::instances_for(t, n, vec);
          for (std::int64_t m : {2112, 4096, 6336})
            for (double bpc : {0.0, 18.8}) {
              gen::SpaceQuery q{Kernel::bwd_dx, d, n, m, 132, 90};
              q.residual = form > 0;
              q.norm = norm;
              q.dram_bytes_per_sm_cycle = bpc;
              const InstanceKey key = gen::make_instance(t, gen::default_config(q, valid), n, vec);
              if (gen::has_finish_entry(key) && std::find(keys.begin(), keys.end(), key) == keys.end())
                keys.push_back(key);
            }
        }
    }
  ASSERT_GE(keys.size(), 20u);
  for (std::size_t first = 0; first < keys.size(); first += 8) {  // eight compilations at a time
    std::vector<std::future<long>> jobs;
    const std::size_t last = std::min(keys.size(), first + 8);
    for (std::size_t i = first; i < last; ++i)
      jobs.push_back(std::async(std::launch::async, [key = keys[i]] { return most_spilled(key); }));
    for (std::size_t i = first; i < last; ++i) {
      const long spilled = jobs[i - first].get();
      EXPECT_GE(spilled, 0) << keys[i].name() << ": does not compile";
      EXPECT_LE(spilled, keys[i].traits.has_bias ? 0 : 24) << keys[i].name() << ": spills";
    }
  }
  std::printf("[ finish   ] %zu training-size backward defaults with a finishing entry compiled, none spilling (but "
              "the finish's 24-byte save without a bias)\n",
              keys.size());
}

// That `key`'s PTX stores 16 bytes at a time (st.global.v4) and has no
// 4-byte global store at +4, +8 or +12 of an address: no 16-byte store split
// in four by the compiler.
void expect_whole_stores(const InstanceKey& key) {
  const Compiled out = nvrtc(gen::render(key).source, "sm_90");
  ASSERT_TRUE(out.ok) << key.name() << "\n" << out.log;
  EXPECT_NE(out.ptx.find("st.global.v4.b32"), std::string::npos) << key.name();
  std::size_t split = 0;
  std::string example;
  for (std::size_t at = out.ptx.find("st.global."); at != std::string::npos; at = out.ptx.find("st.global.", at + 1)) {
    const std::string line = out.ptx.substr(at, out.ptx.find('\n', at) - at);
    const bool scalar = line.rfind("st.global.u32", 0) == 0 || line.rfind("st.global.f32", 0) == 0 ||
                        line.rfind("st.global.b32", 0) == 0;
    if (scalar && (line.find("+4]") != std::string::npos || line.find("+8]") != std::string::npos ||
                   line.find("+12]") != std::string::npos)) {
      ++split;
      example = line;
    }
  }
  EXPECT_EQ(split, 0u) << key.name() << ": 4-byte stores inside a 16-byte access, e.g. " << example;
}

// The wide backward writes dx, dresidual and its partial rows 16 bytes at a
// time (common.cuh's store_global). Through store()'s Pack copy the compiler
// split every such store there into four 4-byte ones (st.global.u32 / .f32
// at +0, +4, +8, +12 of one address: four times the write requests to L2;
// LayerNorm bf16 at 262144 columns ran at 75.6% of copy against 87.9 whole,
// bench/results/s47, call 3). The H200's defaults of each kind of wide row
// (x and dy staged; x alone, fp32; dz staged with the residual in x's dtype
// and beside an fp32 stream): no 4-byte store at +4, +8 or +12. (Not add +
// RMSNorm fp32 with dz through L2, which keeps store(): whole_stores.)
TEST(KernelHeaders, WideBackwardStoresWhole) {
  struct Case {
    DType x;
    Norm norm;
    std::optional<DType> residual;
    std::int64_t n;
  };
  const std::vector<Case> cases = {{bf16, Norm::layer, std::nullopt, 16384}, {bf16, Norm::rms, std::nullopt, 262144},
                                   {f32, Norm::layer, std::nullopt, 262144}, {f16, Norm::layer, f16, 65536},
                                   {bf16, Norm::rms, f32, 32768},            {f32, Norm::layer, f32, 262144}};
  for (const Case& k : cases) {
    Traits t{Kernel::bwd_dx, k.x, k.x, true, k.norm == Norm::layer};
    t.norm = k.norm;
    t.residual = k.residual;
    const int vec = gen::max_vec(k.x);
    const std::int64_t bandwidth_m = (std::int64_t{512} << 20) / (k.n * static_cast<std::int64_t>(dtype_size(k.x)));
    gen::SpaceQuery q{Kernel::bwd_dx, k.x, k.n, bandwidth_m, 132, 90};
    q.residual = k.residual.has_value();
    q.norm = k.norm;
    q.dram_bytes_per_sm_cycle = 18.8;
    const Config c = gen::default_config(q, gen::instances_for(t, k.n, vec));
    const InstanceKey key = gen::make_instance(t, c, k.n, vec);
    ASSERT_TRUE(gen::is_wide_bwd(key)) << key.name() << ": not the wide backward";
    expect_whole_stores(key);
  }
}

// The register cluster forward (fwd_cluster.cuh: a row over a cluster, in
// registers) stores y and z whole: its PTX had four st.global.u32 for each
// 16-byte store (16384 columns a CTA in 16 warps: 16 of them), level with the
// whole stores on an H200 (bench/results/s48, call 2).
TEST(KernelHeaders, ClusterForwardStoresWhole) {
  struct Case {
    DType x;
    std::optional<DType> residual;
    int block, warps, cluster;
  };
  for (const Case& k : std::vector<Case>{{f16, std::nullopt, 16384, 16, 4}, {bf16, bf16, 8192, 16, 8},
                                         {f32, f32, 8192, 8, 8}}) {
    Traits t{Kernel::fwd, k.x, k.x, true, true};
    t.residual = k.residual;
    const Config c{k.block, k.warps, 1, 33, k.cluster};
    const std::int64_t n = std::int64_t{k.block} * k.cluster;
    const InstanceKey key = gen::make_instance(t, c, n, gen::max_vec(k.x));
    ASSERT_FALSE(gen::is_wide_fwd(key) || gen::stages_in_smem(key)) << key.name() << ": not the cluster forward";
    expect_whole_stores(key);
  }
}

TEST(KernelHeaders, BackwardDwdbInstantiations) {
  struct DwdbCase {
    DType w;
    int block, warps;
    bool weight, bias;
  };
  const std::vector<DwdbCase> cases = {
      {f32, 32, 1, true, true},      {f16, 128, 8, true, false}, {bf16, 1024, 32, false, true},
      {f32, 256, 8, true, true},     {bf16, 64, 2, true, false},
  };
  std::string s = "#include \"lntune/kernels/bwd_dwdb.cuh\"\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const DwdbCase& c = cases[i];
    const std::string shape = "S" + std::to_string(i);
    s += "using " + shape + " = lntune::DwdbShape<" + type_of(c.w) + ", " + std::to_string(c.block) + ", " +
         std::to_string(c.warps) + ", " + b(c.weight) + ", " + b(c.bias) + ">;\n";
    s += "extern \"C\" __global__ void __launch_bounds__(" + shape + "::kThreads) k" + std::to_string(i) +
         "(const lntune::DwdbParams p) { lntune::layer_norm_bwd_dwdb<" + shape + ">(p); }\n";
  }
  expect_compiles("bwd_dwdb.cuh", s, cases.size(), {"sm_80", "sm_90"});
}

// Issue 11: every variant compiles, in each family's single-tile, tiled and
// cluster forms (one translation unit per family and form: NVRTC is slow).
TEST(KernelHeaders, VariantInstantiations) {
  const RowCase fwd_single{bf16, bf16, true, true, 1024, 4, 1, 8, true, 1};
  const RowCase fwd_tiled{f16, f32, true, true, 4096, 8, 1, 8, false, 1};
  const RowCase fwd_rows{f32, f32, true, false, 128, 2, 2, 4, true, 1};
  for (const RowCase& base : {fwd_single, fwd_tiled, fwd_rows}) {
    const auto cases = variants_of(base);
    expect_compiles("fwd.cuh variants", row_unit("fwd.cuh", "layer_norm_fwd", "FwdParams", cases), cases.size(),
                    {"sm_90"});
  }
  const auto cluster = variants_of(RowCase{bf16, f32, true, true, 8192, 8, 1, 8, true, 4});
  expect_compiles("fwd_cluster.cuh variants", row_unit("fwd_cluster.cuh", "layer_norm_fwd_cluster", "FwdParams", cluster),
                  cluster.size(), {"sm_90"});
  const RowCase bwd_single{bf16, bf16, true, true, 2048, 8, 1, 8, true, 1};
  const RowCase bwd_tiled{f32, f32, true, true, 4096, 8, 1, 4, false, 1};
  const RowCase bwd_cluster{f16, f16, true, false, 4096, 8, 1, 8, true, 4};
  for (const RowCase& base : {bwd_single, bwd_tiled, bwd_cluster}) {
    const auto cases = variants_of(base);
    expect_compiles("bwd_dx.cuh variants", row_unit("bwd_dx.cuh", "layer_norm_bwd_dx", "BwdParams", cases, ", false"),
                    cases.size(), {"sm_90"});
  }
  // sm_80 too, for one form each.
  const auto fwd80 = variants_of(fwd_single);
  expect_compiles("fwd.cuh variants", row_unit("fwd.cuh", "layer_norm_fwd", "FwdParams", fwd80), fwd80.size(),
                  {"sm_80"});
  const auto bwd80 = variants_of(bwd_tiled);
  expect_compiles("bwd_dx.cuh variants", row_unit("bwd_dx.cuh", "layer_norm_bwd_dx", "BwdParams", bwd80, ", false"), bwd80.size(),
                  {"sm_80"});
}

// The instantiation templates carry the variant: a rendered RMSNorm instance
// with every option compiles and names what it is.
TEST(KernelHeaders, RenderedVariantInstancesCompile) {
  Traits t{Kernel::fwd, DType::bf16, DType::f32, true, true};
  t.norm = Norm::rms;
  t.residual = DType::f32;
  t.zero_centered = true;
  t.y_dtype = DType::f16;
  for (Kernel k : {Kernel::fwd, Kernel::bwd_dx}) {
    t.kernel = k;
    for (int cluster : {1, 2}) {
      Config c{2048, 8, 1, k == Kernel::bwd_dx ? 132 : 0, cluster};
      const std::int64_t n = 2048 * cluster;
      const gen::KernelSource src = gen::render(gen::make_instance(t, c, n, 8));
      SCOPED_TRACE(src.kernel_name);
      EXPECT_NE(src.kernel_name.find("_rms_rfp32_zc_ofp16"), std::string::npos);
      EXPECT_NE(src.source.find("RMSNorm"), std::string::npos);
      EXPECT_NE(src.source.find("NORM = lntune::kRmsNorm"), std::string::npos);
      EXPECT_NE(src.source.find("using Residual = float"), std::string::npos);
      EXPECT_NE(src.source.find("ZERO_CENTERED = true"), std::string::npos);
      EXPECT_NE(src.source.find("using Out = lntune::half_t"), std::string::npos);
      const Compiled out = nvrtc(src.source, "sm_90");
      EXPECT_TRUE(out.ok) << out.log;
    }
  }
  // A LayerNorm instance renders no variant: Residual void, Out = x's type.
  const gen::KernelSource ln =
      gen::render(gen::make_instance(Traits{Kernel::fwd, DType::bf16, DType::bf16, true, true}, Config{1024, 4, 1, 0, 1}, 1024, 8));
  EXPECT_NE(ln.source.find("using Residual = void"), std::string::npos);
  EXPECT_EQ(ln.kernel_name.find("rms"), std::string::npos);
}

TEST(KernelHeaders, ShapeRulesAreCompileErrors) {
  // block_size not a multiple of threads_per_row * vec: a static_assert, not wrong code.
  const std::string bad = row_unit("fwd.cuh", "layer_norm_fwd", "FwdParams", {{bf16, bf16, true, true, 256, 4, 1, 8, true, 1}});
  const Compiled c = nvrtc(bad, "sm_90");
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.log.find("block_size is a multiple of threads_per_row * vec"), std::string::npos) << c.log;
}

// A translation unit over fwd_smem.cuh: one kernel per case and load mode
// (kLoadBulk, kLoadAsync).
std::string smem_unit(const std::vector<RowCase>& cases, const std::vector<const char*>& loads) {
  std::string s = "#include \"lntune/kernels/fwd_smem.cuh\"\n";
  std::size_t k = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string shape = "S" + std::to_string(i);
    s += "using " + shape + " = " + row_shape(cases[i]) + ";\n";
    for (const char* load : loads) {
      s += "extern \"C\" __global__ void __launch_bounds__(" + shape + "::kThreads)";
      if (cases[i].cluster > 1) s += " __cluster_dims__(" + std::to_string(cases[i].cluster) + ", 1, 1)";
      s += " k" + std::to_string(k++) + "(const lntune::FwdParams p) { lntune::layer_norm_fwd_smem<" + shape +
           ", lntune::" + load + ">(p); }\n";
    }
  }
  return s;
}

// The forward with a slab in shared memory: every dtype pair, weight/bias on
// and off, clusters of 1 to 16 CTAs, vector widths down to one element (the
// cp.async and register fallbacks), both load modes; on sm_80 (no clusters,
// no bulk copies: cp.async) and sm_90.
TEST(KernelHeaders, ForwardSmemInstantiations) {
  const std::vector<RowCase> clusters = {
      {f16, f16, true, true, 16384, 4, 1, 8, true, 4},     {bf16, f32, true, false, 8192, 4, 1, 8, true, 8},
      {f32, f32, false, true, 16384, 8, 1, 4, true, 16},   {f16, f32, false, false, 32768, 8, 1, 4, true, 2},
      {bf16, bf16, true, true, 65536, 16, 1, 1, true, 2},  {f32, f32, true, true, 32768, 16, 1, 2, true, 8},
  };
  const std::vector<const char*> both = {"kLoadBulk", "kLoadAsync"};
  const std::string unit = smem_unit(clusters, both);
  expect_compiles("fwd_smem.cuh (clusters)", unit, clusters.size() * both.size(), {"sm_90"});
  EXPECT_FALSE(nvrtc(unit, "sm_80").ok) << "clusters need sm_90";
  const std::vector<RowCase> single = {
      {f16, f16, true, true, 65536, 8, 1, 8, true, 1},    {bf16, bf16, false, false, 32768, 4, 1, 8, true, 1},
      {f32, f32, true, true, 32768, 16, 1, 4, true, 1},   {f32, bf16, true, false, 16384, 4, 1, 1, true, 1},
      {bf16, f32, false, true, 65536, 16, 1, 2, true, 1}, {f16, f32, true, true, 8192, 2, 1, 4, true, 1},
  };
  expect_compiles("fwd_smem.cuh", smem_unit(single, both), single.size() * both.size(), {"sm_80", "sm_90"});
  // Every variant, on a cluster (bulk copies; the fp32 residual's 8-element
  // accesses take them too) and on one CTA with 2-byte accesses (registers).
  for (const RowCase& base : {RowCase{bf16, f32, true, true, 16384, 4, 1, 8, true, 4},
                              RowCase{f16, f16, true, true, 32768, 8, 1, 1, true, 1}}) {
    const auto cases = variants_of(base);
    expect_compiles("fwd_smem.cuh variants", smem_unit(cases, {"kLoadBulk"}), cases.size(), {"sm_90"});
  }
}

// The SASS of the forward with a slab in shared memory issues bulk copies
// (UBLKCP) waited on with an mbarrier, and stores y 16 bytes at a time: the
// PTX has the bulk copy and st.global.v4, and no 32-bit stores of y.
TEST(KernelHeaders, ForwardSmemUsesBulkCopiesAndVectorStores) {
  const std::vector<RowCase> c = {{bf16, bf16, true, true, 16384, 4, 1, 8, true, 4}};
  const Compiled out = nvrtc(smem_unit(c, {"kLoadBulk"}), "sm_90");
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_NE(out.ptx.find("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"), std::string::npos);
  EXPECT_NE(out.ptx.find("mbarrier.try_wait.parity"), std::string::npos);
  EXPECT_NE(out.ptx.find("st.global.v4.b32"), std::string::npos);
  EXPECT_EQ(out.ptx.find("st.global.u32"), std::string::npos);
  const Compiled async = nvrtc(smem_unit(c, {"kLoadAsync"}), "sm_90");
  ASSERT_TRUE(async.ok) << async.log;
  EXPECT_EQ(async.ptx.find("cp.async.bulk"), std::string::npos);
  EXPECT_NE(async.ptx.find("cp.async.cg.shared.global"), std::string::npos);
}

// The forward whose row sits in registers pays a fixed cost per row and
// thread that bounds it where the memory outruns the SM (an H200: the bf16
// forward at N = 8192 ran at 79% of copy with 409 instructions a thread and
// row, 92% with 336; bench/results/s34, bench/NOTES.md). Its PTX keeps that
// cost down: one barrier a statistic (the mean's and the variance's sums
// in two scratch areas), one shared load a statistic (the cross-warp step
// as a butterfly, not a loop over the warps' sums), rstd by rsqrt, 1/N once
// and no division.
TEST(KernelHeaders, ForwardRowStatisticsStayCheap) {
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
  };
  struct Case {
    Norm norm;
    Config config;
    std::int64_t n;
    std::size_t statistics;  // row sums: LayerNorm's mean and variance, RMSNorm's mean square
  };
  for (const Case& c : {Case{Norm::layer, Config{8192, 16, 1, 0}, 8192, 2}, Case{Norm::layer, Config{4096, 8, 2, 0}, 4000, 2},
                        Case{Norm::rms, Config{8192, 16, 1, 0}, 8192, 1}}) {
    Traits t{Kernel::fwd, DType::bf16, DType::bf16, true, c.norm == Norm::layer};
    t.norm = c.norm;
    const gen::KernelSource src = gen::render(gen::make_instance(t, c.config, c.n, 8));
    SCOPED_TRACE(src.kernel_name);
    const Compiled out = nvrtc(src.source, "sm_90");
    ASSERT_TRUE(out.ok) << out.log;
    // Several rows a CTA: one more of each, warp 0 waiting at named barrier 1
    // for the CTA's statistics and reading them back (store_cta_stats), and
    // one bar.arrive (put_cta_stats); none with one row a CTA.
    const std::size_t cta_stats = c.config.rows_per_cta > 1 ? 1 : 0;
    EXPECT_EQ(count(out.ptx, "bar.sync"), c.statistics + cta_stats);
    EXPECT_EQ(count(out.ptx, "bar.arrive"), cta_stats);
    EXPECT_EQ(count(out.ptx, "ld.shared.f32"), c.statistics + cta_stats);
    EXPECT_EQ(count(out.ptx, "rsqrt.approx.f32"), 1u);
    EXPECT_EQ(count(out.ptx, "rcp.rn.f32"), 1u) << "1/N once a row";
    EXPECT_EQ(count(out.ptx, "div.rn.f32"), 0u);
    EXPECT_EQ(count(out.ptx, "sqrt.rn.f32"), 0u);
  }
}

// Every config of the search space that stages its slab in shared memory,
// instantiated through the generator (traits rotating over dtypes,
// weight/bias, norms, residuals, output dtypes) for the bandwidth-regime N,
// compiles for sm_90 with no spills (ptxas -v in NVRTC's log).
TEST(KernelHeaders, SmemForwardSpaceCompilesWithoutSpills) {
  std::vector<Traits> rotation;
  for (DType x : {f16, bf16, f32})
    for (DType w : {x, f32})
      for (int mask = 0; mask < 4; ++mask) {
        if (x == f32 && w != x) continue;
        Traits t{Kernel::fwd, x, w, (mask & 1) != 0, (mask & 2) != 0};
        if (mask == 1) t.norm = Norm::rms;
        if (mask == 3) t.residual = x;
        if (mask == 2) t.y_dtype = x == f32 ? bf16 : f32;
        rotation.push_back(t);
      }
  std::size_t next = 0, compiled = 0;
  std::set<std::string> seen;
  for (DType d : {f16, bf16, f32})
    for (std::int64_t n : {32768, 65536, 262144}) {
      int in_space = 0;
      for (const Config& c : gen::search_space({Kernel::fwd, d, n, 4096, 132, 90})) {
        if (!gen::forward_in_smem(c, n)) continue;
        ++in_space;
        Traits t;
        InstanceKey key;
        // The next traits of this dtype whose slabs fit shared memory.
        for (std::size_t tries = 0; tries < rotation.size(); ++tries) {
          t = rotation[next++ % rotation.size()];
          if (t.x_dtype != d) continue;
          try {
            key = gen::make_instance(t, c, n, gen::max_vec(d));
            break;
          } catch (const Error&) {
            continue;  // a residual's slab too large for this config
          }
        }
        ASSERT_TRUE(gen::stages_in_smem(key)) << to_string(c);
        if (!seen.insert(key.name()).second) continue;
        const gen::KernelSource src = gen::render(key);
        SCOPED_TRACE(src.kernel_name);
        EXPECT_NE(src.source.find("lntune/kernels/fwd_smem.cuh"), std::string::npos);
        const Compiled out = nvrtc(src.source, "sm_90", true, {"--ptxas-options=-v"});
        ASSERT_TRUE(out.ok) << out.log;
        EXPECT_NE(out.log.find("0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << out.log;
        ++compiled;
      }
      EXPECT_GT(in_space, 0) << to_string(d) << " N=" << n;
    }
  std::printf("[ smem fwd ] %zu instances compiled for sm_90, none spills\n", compiled);
}

// `lntune gen --flatten`: the instance with its headers inlined compiles with
// NVRTC given no headers, for each kernel family.
TEST(KernelHeaders, FlattenedInstancesCompileWithoutHeaders) {
  struct Pick {
    Kernel kernel;
    std::int64_t n;
    int cluster;
  };
  for (const Pick& pick : {Pick{Kernel::fwd, 4096, 1}, Pick{Kernel::fwd, 65536, 1}, Pick{Kernel::fwd, 65536, 4},
                           Pick{Kernel::bwd_dx, 4096, 1}, Pick{Kernel::bwd_dx, 65536, 8},
                           Pick{Kernel::bwd_dwdb, 4096, 1}}) {
    Config c = gen::default_config({pick.kernel, DType::bf16, pick.n, 4096, 132});
    if (pick.kernel != Kernel::bwd_dwdb) {
      c.cluster_size = pick.cluster;
      c.rows_per_cta = 1;
      if (pick.cluster > 1) {
        c.block_size = static_cast<int>(pick.n / pick.cluster);
        c.num_warps = 16;
      } else if (pick.n > 8192) {
        c.block_size = 4096;
        c.num_warps = 8;
      }
    }
    const Traits t{pick.kernel, DType::bf16, DType::f32, true, true};
    const gen::KernelSource src = gen::render(gen::make_instance(t, c, pick.n, 8));
    const std::string flat = gen::flatten(src.source);
    SCOPED_TRACE(src.kernel_name);
    EXPECT_EQ(flat.find("#include"), std::string::npos);
    EXPECT_EQ(flat.find("#pragma once"), std::string::npos);
    EXPECT_NE(flat.find("// ---------------- lntune/common.cuh"), std::string::npos);
    EXPECT_NE(flat.find("struct FwdParams"), std::string::npos);
    const Compiled out = nvrtc(flat, "sm_90", /*with_headers=*/false);
    EXPECT_TRUE(out.ok) << out.log;
    EXPECT_NE(out.ptx.find(".entry " + src.kernel_name + "("), std::string::npos);
  }
}

TEST(KernelHeaders, FlattenNamesAnUnknownHeader) {
  try {
    gen::flatten("#include \"lntune/nope.cuh\"\n");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no lntune header named 'lntune/nope.cuh'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lntune
