// Kernel instances: validation rules (pinned messages), rendering (readable,
// fully substituted, deterministic), naming and hashing.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <unordered_set>

#include "generator/instance.hpp"
#include "generator/space.hpp"
#include "templates/embedded.hpp"

namespace lntune::gen {
namespace {

Traits traits(Kernel k, DType x = DType::bf16, DType w = DType::bf16, bool weight = true, bool bias = true) {
  return Traits{k, x, w, weight, bias};
}

void expect_invalid(const Traits& t, const Config& c, std::int64_t n, int vec, const std::string& message) {
  try {
    make_instance(t, c, n, vec);
    FAIL() << "expected an error: " << message;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Instance, ValidationMessages) {
  const Traits f = traits(Kernel::fwd);
  expect_invalid(f, Config{1000, 4, 1, 0}, 1000, 8, "must be a multiple of threads_per_row * vec (128)");
  // A single tile may be any multiple of its threads' accesses (the widest
  // vec dividing it): the forward's 5120 in 8 warps takes 4-element
  // accesses, in 4 warps 8 (a slab in shared memory); 5000 divides none; a
  // tiled row (N > block_size) keeps powers of two; the backward's tile in
  // registers alone (6144 in 16 warps: 4-element accesses).
  EXPECT_EQ(make_instance(f, Config{5120, 8, 1, 0}, 5120, 8).vec, 4);
  EXPECT_EQ(make_instance(f, Config{5120, 4, 1, 0}, 5120, 8).vec, 8);
  EXPECT_TRUE(stages_in_smem(make_instance(f, Config{5120, 4, 1, 0}, 5120, 8)));
  expect_invalid(f, Config{5000, 8, 1, 0}, 5000, 8, "must be a multiple of threads_per_row * vec (256)");
  expect_invalid(f, Config{5120, 8, 1, 0}, 6000, 8, "block_size must be a power of two");
  EXPECT_EQ(make_instance(traits(Kernel::bwd_dx), Config{6144, 16, 1, 0}, 4608, 8).vec, 4);
  expect_invalid(traits(Kernel::bwd_dx), Config{5120, 8, 1, 0}, 5120, 8, "exceeds 16 elements per thread");
  expect_invalid(traits(Kernel::bwd_dx), Config{6144, 16, 1, 0}, 7000, 8, "block_size must be a power of two");
  Config two{6144, 16, 1, 0};
  two.cluster_size = 2;
  expect_invalid(traits(Kernel::bwd_dx), two, 12000, 8, "block_size must be a power of two");
  // (Other than a power of two: rows of a multiple of 8 threads in a single
  // tile of a multiple of their accesses, Space.SegmentedRows.)
  expect_invalid(f, Config{1024, 3, 1, 0}, 1000, 8, "must be a multiple of threads_per_row * vec (96");
  expect_invalid(f, Config{1024, 3, 1, 0}, 3000, 8, "num_warps or rows_per_cta of other than a power of two: only a single tile");
  expect_invalid(f, Config{1024, 64, 1, 0}, 1000, 8, "num_warps must be in [1, 32]");
  // Tiles in registers are bounded; a row that fits the CTA is staged in shared memory instead.
  expect_invalid(f, Config{4096, 1, 1, 0}, 5000, 8, "exceeds 32 elements per thread (registers)");
  expect_invalid(traits(Kernel::bwd_dx), Config{4096, 1, 1, 0}, 4096, 8, "exceeds 16 elements per thread (registers)");
  expect_invalid(f, Config{64, 4, 1, 0}, 64, 1, "block_size must be at least threads_per_row * vec");
  expect_invalid(f, Config{1024, 4, 2, 0}, 4096, 8, "rows_per_cta > 1 needs a row that fits one tile");
  Config cl{8192, 16, 1, 0};
  cl.cluster_size = 3;
  expect_invalid(f, cl, 20000, 8, "cluster_size must be 1, 2, 4 or 8");
  cl.cluster_size = 2;
  expect_invalid(f, cl, 20000, 8, "cluster_size > 1 needs rows_per_cta = 1 and N <= block_size * cluster_size");
  const Traits r = traits(Kernel::bwd_dwdb, DType::f32, DType::f32, false, false);
  expect_invalid(r, Config{32, 1, 1, 0}, 100, 1, "bwd_dwdb needs a weight or a bias");
  expect_invalid(traits(Kernel::bwd_dwdb), Config{64, 1, 1, 0}, 100, 1, "bwd_dwdb needs 32 <= block_size <= 32 * num_warps");
}

// The wide-row backward: a bwd_dx config with cluster_size > 1 and
// rows_per_cta (rows staged) > 1; its own rules, pinned.
TEST(Instance, WideBackwardRulesAndSharedMemory) {
  const Traits b = traits(Kernel::bwd_dx);
  Config c{8192, 16, 3, 16, 8};
  EXPECT_TRUE(is_wide_bwd(Kernel::bwd_dx, c));
  EXPECT_FALSE(is_wide_bwd(Kernel::fwd, c));
  EXPECT_EQ(rows_per_group(Kernel::bwd_dx, c), 1);
  EXPECT_EQ(rows_per_group(Kernel::fwd, c), 1);  // the wide-row forward's config
  const InstanceKey key = make_instance(b, c, 65536, 8);
  EXPECT_TRUE(is_wide_bwd(key));
  EXPECT_EQ(key.vec, 8);
  // 3 stages of bf16 x and dy slabs, a bf16 weight slab, 3 mbarriers.
  EXPECT_EQ(dynamic_smem_bytes(key, 90), 3u * 8192 * 4 + 8192 * 2 + 24);
  // One row a CTA: the register kernel over the cluster, each CTA's slab
  // staged (two stages of x and dy, bwd_stage_bytes).
  EXPECT_EQ(dynamic_smem_bytes(make_instance(b, Config{8192, 16, 1, 16, 8}, 65536, 8), 90), 2u * 8192 * 4);
  const KernelSource src = render(key);
  EXPECT_NE(src.source.find("lntune/kernels/bwd_dx_wide.cuh"), std::string::npos);
  EXPECT_NE(src.source.find("constexpr int STAGES = 3;"), std::string::npos);
  EXPECT_NE(src.source.find("Shape::kSmemBytes == " + std::to_string(dynamic_smem_bytes(key, 90)) + "u"), std::string::npos);

  expect_invalid(b, c, 65536, 4, "needs 16-byte accesses of x (z) and dy");
  expect_invalid(b, Config{8192, 16, 9, 16, 8}, 65536, 8, "stages 2 to 8 rows per CTA");
  expect_invalid(b, Config{8192, 16, 2, 16, 8}, 70000, 8, "needs N <= block_size * cluster_size");
  expect_invalid(b, Config{8192, 16, 2, 16, 8}, 57344, 8, "every CTA owns columns");
  expect_invalid(b, Config{32768, 16, 2, 8, 8}, 262144, 8, "columns per thread");
  // Where stages of x and dy do not fit, only x's are kept with the weight
  // slab (dy read twice from global memory): 4 stages of bf16 16384-column
  // slabs and the weight.
  EXPECT_TRUE(wide_stages_dy(key));
  EXPECT_NE(src.source.find("constexpr bool STAGE_DY = true;"), std::string::npos);
  // The rendered source of `k` holds `flag` and checks its shared-memory figure.
  const auto expect_source = [](const InstanceKey& k, const std::string& flag) {
    const std::string text = render(k).source;
    EXPECT_NE(text.find(flag), std::string::npos) << flag;
    EXPECT_NE(text.find("Shape::kSmemBytes == " + std::to_string(dynamic_smem_bytes(k, 90)) + "u"), std::string::npos);
  };
  const InstanceKey xw = make_instance(b, Config{16384, 16, 4, 8, 16}, 262144, 8);
  EXPECT_FALSE(wide_stages_dy(xw));
  EXPECT_EQ(dynamic_smem_bytes(xw, 90), 4u * 16384 * 2 + 16384 * 2 + 32);
  expect_source(xw, "constexpr bool STAGE_DY = false;");
  // With a residual, dz is staged beside x and dy where all three fit
  // (gen::wide_stages_dz): 4 stages of bf16 8192-column slabs (48 KB each)
  // and the weight, not 4 stages of 16384-column slabs (dz then read from
  // global memory); never without a residual.
  EXPECT_FALSE(wide_stages_dz(key));
  EXPECT_NE(src.source.find("constexpr bool STAGE_DZ = false;"), std::string::npos);
  Traits br = b;
  br.residual = DType::bf16;
  const InstanceKey rz = make_instance(br, Config{8192, 16, 4, 66, 2}, 16384, 8);
  EXPECT_TRUE(wide_stages_dz(rz));
  EXPECT_EQ(dynamic_smem_bytes(rz, 90), 4u * 8192 * 6 + 8192 * 2 + 32);
  expect_source(rz, "constexpr bool STAGE_DZ = true;");
  const InstanceKey rn = make_instance(br, Config{16384, 32, 3, 33, 4}, 65536, 8);
  EXPECT_TRUE(wide_stages_dy(rn));
  EXPECT_FALSE(wide_stages_dz(rn));
  EXPECT_EQ(dynamic_smem_bytes(rn, 90), 3u * 16384 * 4 + 16384 * 2 + 24);
  // Any count of warps where the slab is a multiple of the CTA's accesses
  // (session 46: 9216 columns as two slabs of 4608 in 9 warps, 17408 as two
  // of 8704 in 17); the shape checks its warps' accesses.
  EXPECT_NO_THROW(make_instance(b, Config{4608, 9, 3, 132, 2}, 9216, 8));
  EXPECT_NO_THROW(make_instance(b, Config{8704, 17, 2, 66, 2}, 17408, 8));
  EXPECT_NE(render(make_instance(b, Config{4608, 9, 3, 132, 2}, 9216, 8)).source.find("constexpr int NUM_WARPS = 9;"),
            std::string::npos);
  expect_invalid(b, Config{4608, 7, 3, 132, 2}, 9216, 8, "multiple of 32 * num_warps * vec");
  // fp32 rows of 256K columns in clusters of 16: 2 stages of x fit beside
  // the fp32 weight slab, 3 do not.
  const Traits f = traits(Kernel::bwd_dx, DType::f32, DType::f32);
  const InstanceKey f2 = make_instance(f, Config{16384, 16, 2, 7, 16}, 262144, 4);
  EXPECT_FALSE(wide_stages_dy(f2));
  EXPECT_EQ(dynamic_smem_bytes(f2, 90), 2u * 16384 * 4 + 16384 * 4 + 16);
  expect_invalid(f, Config{16384, 16, 3, 7, 16}, 262144, 4, "bytes of shared memory, more than");
  Config c32{4096, 4, 2, 8, 32};
  expect_invalid(b, c32, 131072, 8, "cluster_size 2 to 16");
  // Any count of CTAs up to 16 where every CTA owns columns: 100000 columns
  // in 13 slabs of 8192 (the last holding 1696), not in 14.
  EXPECT_NO_THROW(make_instance(b, Config{8192, 8, 3, 16, 13}, 100000, 8));
  expect_invalid(b, Config{8192, 8, 3, 16, 14}, 100000, 8, "every CTA owns columns");
  expect_invalid(b, Config{8192, 8, 3, 16, 12}, 100000, 8, "needs N <= block_size * cluster_size");
  // An fp32 row with a 16-bit dy: 4-element accesses of dy are 8 bytes.
  Traits mixed = traits(Kernel::bwd_dx, DType::f32, DType::f32);
  mixed.y_dtype = DType::bf16;
  expect_invalid(mixed, Config{8192, 16, 2, 16, 8}, 65536, 4, "needs 16-byte accesses of x (z) and dy");
  // Cluster size 16 is allowed for the wide kernel only.
  EXPECT_NO_THROW(make_instance(b, Config{16384, 16, 2, 8, 16}, 262144, 8));
  expect_invalid(b, Config{16384, 16, 1, 8, 16}, 262144, 8, "cluster_size must be 1, 2, 4 or 8");
  // The wide-row backward's slabs: any multiple of a CTA's accesses (13 of
  // 12288 columns at 150000, gen::wide_bwd_fine_split); other kernels'
  // block_size stays a power of two.
  Config fine{12288, 16, 3, 0};
  fine.cluster_size = 13;
  EXPECT_TRUE(is_wide_bwd(make_instance(traits(Kernel::bwd_dx), fine, 150000, 8)));
  fine.block_size = 10240;  // 2.5 accesses of 16 warps at 8 columns
  fine.cluster_size = 15;
  expect_invalid(traits(Kernel::bwd_dx), fine, 150000, 8,
                 "the wide-row backward's block_size must be a multiple of 32 * num_warps * vec (4096");
  expect_invalid(traits(Kernel::fwd), Config{12288, 16, 3, 0, 13}, 150000, 8, "block_size must be a power of two");
}

// The wide-row forward: a fwd config with cluster_size > 1 and rows_per_cta
// (rows staged) > 1; its own rules and shared memory, pinned.
// The register backward stages each next row in shared memory (bwd_dx.cuh,
// staged_bwd): two stages of rows_per_cta rows of x and dy (with a residual:
// z, dy and dz), where a row is held whole (by a CTA, or by each CTA of a
// cluster its slab), with accesses of at least 4 bytes, up to
// kMaxBwdStageBytes (kMaxBwdStageBytesAlone from 512 threads); dynamic shared memory where the stages do not fit the
// static 47 KB beside the row sums and the finish's tree. The instance
// checks the figure.
TEST(Instance, BackwardStagedRowsSharedMemory) {
  const Traits b = traits(Kernel::bwd_dx);
  // bf16 N = 4096 in two rows: 64 KB, dynamic.
  const InstanceKey two = make_instance(b, Config{4096, 16, 2, 132}, 4096, 8);
  EXPECT_TRUE(stages_bwd_rows(two, 90));
  EXPECT_EQ(bwd_stage_bytes(two, 90), 2 * 2 * 4096 * (2 + 2));
  EXPECT_EQ(dynamic_smem_bytes(two, 90), bwd_stage_bytes(two, 90));
  EXPECT_NE(render(two).source.find("bwd_stage_bytes<Shape>() == 65536,"), std::string::npos);
  // 16 KB + 4 KB of sums + 8 KB: static.
  const InstanceKey pair = make_instance(b, Config{1024, 4, 2, 264}, 1024, 8);
  EXPECT_EQ(bwd_stage_bytes(pair, 90), 0);
  EXPECT_TRUE(stages_bwd_rows(pair, 90));
  EXPECT_FALSE(stages_bwd_rows(make_instance(b, Config{1024, 4, 2, 264}, 1023, 1), 90)) << "2-byte accesses";
  EXPECT_NE(render(pair).source.find("bwd_stage_bytes<Shape>() == 0,"), std::string::npos);
  // The edge, 32 KB of stages: with 8 KB of finish, static; with 8 KB of row
  // sums too, dynamic.
  EXPECT_EQ(bwd_stage_bytes(make_instance(b, Config{4096, 8, 1, 132}, 4096, 8), 90), 0);
  EXPECT_EQ(bwd_stage_bytes(make_instance(b, Config{2048, 8, 2, 132}, 2048, 8), 90), 32768);
  Traits out32 = b;
  out32.y_dtype = DType::f32;  // dy twice x's bytes
  EXPECT_EQ(bwd_stage_bytes(make_instance(out32, Config{4096, 8, 1, 132}, 4096, 8), 90), 2 * 4096 * (2 + 4));
  EXPECT_EQ(bwd_stage_bytes(make_instance(out32, Config{2048, 8, 1, 132}, 2048, 8), 90), 0) << "24 KB: static";
  Traits f = b;
  f.x_dtype = f.w_dtype = DType::f32;
  EXPECT_EQ(bwd_stage_bytes(make_instance(f, Config{4096, 8, 1, 132}, 4096, 4), 90), kMaxBwdStageBytes * 2 / 3);
  EXPECT_EQ(bwd_stage_bytes(make_instance(f, Config{4096, 8, 1, 132}, 4095, 1), 90), kMaxBwdStageBytes * 2 / 3)
      << "4-byte copies";
  // 128 KB in 512 threads (one CTA a SM by their registers): staged up to
  // kMaxBwdStageBytesAlone.
  EXPECT_EQ(bwd_stage_bytes(make_instance(f, Config{8192, 16, 1, 132}, 8192, 4), 90), 2 * 8192 * (4 + 4));
  EXPECT_EQ(bwd_stage_bytes(make_instance(b, Config{8192, 16, 1, 132}, 8191, 1), 90), 0) << "2-byte accesses";
  EXPECT_EQ(bwd_stage_bytes(make_instance(b, Config{8192, 16, 1, 132}, 8190, 2), 90), 2 * 8192 * (2 + 2));
  EXPECT_EQ(bwd_stage_bytes(make_instance(b, Config{8192, 16, 1, 132, 2}, 16000, 8), 90), 2 * 8192 * (2 + 2))
      << "each CTA of a cluster its slab";
  EXPECT_EQ(bwd_stage_bytes(make_instance(b, Config{8192, 16, 1, 132}, 12000, 8), 90), 0) << "tiled rows";
  // With a residual: z, dy and dz, z and dz in the residual's dtype.
  Traits r = b;
  r.residual = DType::bf16;
  const InstanceKey res = make_instance(r, Config{8192, 16, 1, 132}, 8192, 8);
  EXPECT_TRUE(stages_bwd_rows(res, 90));
  EXPECT_EQ(bwd_stage_bytes(res, 90), 2 * 8192 * (2 + 2 + 2)) << "96 KB, the limit";
  EXPECT_NE(render(res).source.find("bwd_stage_bytes<Shape>() == 98304,"), std::string::npos);
  EXPECT_EQ(bwd_stage_bytes(make_instance(r, Config{1024, 4, 2, 264}, 1024, 8), 90), 0) << "24 KB + 8 KB + 8 KB: static";
  EXPECT_TRUE(stages_bwd_rows(make_instance(r, Config{1024, 4, 2, 264}, 1024, 8), 90));
  Traits r32 = b;
  r32.residual = DType::f32;  // z and dz twice x's bytes
  EXPECT_EQ(bwd_stage_bytes(make_instance(r32, Config{4096, 8, 1, 132}, 4096, 8), 90), 2 * 4096 * (4 + 2 + 4));
  EXPECT_EQ(bwd_stage_bytes(make_instance(r32, Config{8192, 16, 1, 132}, 8192, 8), 90), 2 * 8192 * (4 + 2 + 4))
      << "160 KB in 512 threads";
  Traits f32r = f;
  f32r.residual = DType::f32;
  EXPECT_EQ(bwd_stage_bytes(make_instance(f32r, Config{8192, 16, 1, 132}, 8192, 4), 90), kMaxBwdStageBytesAlone)
      << "fp32 z, dy and dz: the limit";
  // Before sm_90 (sm_80: 163 KB a CTA, sm_86 and sm_89: 99 KB) as before
  // session 45: no residual, no cluster, not above kMaxBwdStageBytes; both
  // figures are in the source where they differ, the instance checks the one
  // of the arch it compiles for.
  EXPECT_EQ(bwd_stage_bytes(make_instance(f32r, Config{8192, 16, 1, 132}, 8192, 4), 80), 0);
  EXPECT_FALSE(stages_bwd_rows(make_instance(f, Config{8192, 16, 1, 132}, 8192, 4), 86));
  EXPECT_FALSE(stages_bwd_rows(res, 80)) << "a residual";
  EXPECT_FALSE(stages_bwd_rows(make_instance(b, Config{8192, 16, 1, 132, 2}, 16000, 8), 80)) << "a cluster";
  EXPECT_EQ(bwd_stage_bytes(two, 80), bwd_stage_bytes(two, 90)) << "no residual, 64 KB: every arch";
  const std::string fused = render(res).source;
  EXPECT_NE(fused.find("#if __CUDA_ARCH__ >= 900"), std::string::npos);
  EXPECT_EQ(render(two).source.find("__CUDA_ARCH__"), std::string::npos) << "one figure where they agree";
  const std::string both = render(make_instance(f, Config{8192, 16, 1, 132}, 8192, 4)).source;
  EXPECT_NE(both.find("bwd_stage_bytes<Shape>() == 131072,"), std::string::npos);
  EXPECT_NE(both.find("bwd_stage_bytes<Shape>() == 0,"), std::string::npos);
  EXPECT_EQ(bwd_stage_bytes(make_instance(f32r, Config{4096, 8, 1, 132}, 4096, 4), 90), kMaxBwdStageBytes)
      << "256 threads: the two-CTA limit";
  EXPECT_FALSE(stages_bwd_rows(make_instance(r, Config{8192, 16, 1, 132}, 8191, 1), 90)) << "2-byte accesses";
  EXPECT_EQ(bwd_stage_bytes(make_instance(traits(Kernel::fwd), Config{1024, 4, 2, 0}, 1024, 8), 90), 0);
}

TEST(Instance, WideForwardRulesAndSharedMemory) {
  const Traits f = traits(Kernel::fwd);
  Config c{16384, 16, 3, 7, 16};
  EXPECT_TRUE(is_wide_fwd(Kernel::fwd, c));
  EXPECT_FALSE(is_wide_fwd(Kernel::bwd_dx, c));
  EXPECT_FALSE(forward_in_smem(c, 262144));
  EXPECT_EQ(rows_per_group(Kernel::fwd, c), 1);
  const InstanceKey key = make_instance(f, c, 262144, 8);
  EXPECT_TRUE(is_wide_fwd(key));
  EXPECT_FALSE(stages_in_smem(key));
  EXPECT_EQ(key.vec, 8);
  // 3 stages of a bf16 slab, 3 mbarriers.
  EXPECT_EQ(dynamic_smem_bytes(key, 90), 3 * 16384 * 2 + 24);
  const KernelSource src = render(key);
  EXPECT_NE(src.source.find("lntune/kernels/fwd_wide.cuh"), std::string::npos);
  EXPECT_NE(src.source.find("constexpr int STAGES = 3;"), std::string::npos);
  // With an fp32 residual: each stage holds x's slab and the residual's.
  Traits r = f;
  r.residual = DType::f32;
  EXPECT_EQ(dynamic_smem_bytes(make_instance(r, Config{8192, 8, 2, 7, 16}, 131072, 8), 90), 2 * 8192 * 6 + 16);
  expect_invalid(r, c, 262144, 8, "shared memory");
  // fp32 rows and residual of 256K columns: x's 2 stages of 64 KiB and one
  // slot for the residual; at 3 stages x alone, the residual read from
  // global memory. Both write z over x.
  Traits r32 = traits(Kernel::fwd, DType::f32, DType::f32);
  r32.residual = DType::f32;
  const InstanceKey slot = make_instance(r32, Config{16384, 16, 2, 7, 16}, 262144, 4);
  EXPECT_EQ(wide_fwd_residual(slot), WideResidual::slot);
  EXPECT_EQ(dynamic_smem_bytes(slot, 90), 3 * 16384 * 4 + 24);
  EXPECT_NE(render(slot).source.find("RESIDUAL = lntune::kResidualSlot;"), std::string::npos);
  const InstanceKey unstaged = make_instance(r32, Config{16384, 16, 3, 7, 16}, 262144, 4);
  EXPECT_EQ(wide_fwd_residual(unstaged), WideResidual::global);
  EXPECT_EQ(dynamic_smem_bytes(unstaged, 90), 3 * 16384 * 4 + 24);
  EXPECT_NE(render(unstaged).source.find("RESIDUAL = lntune::kResidualGlobal;"), std::string::npos);
  EXPECT_EQ(wide_fwd_residual(make_instance(r32, Config{4096, 8, 3, 7, 16}, 65536, 4)), WideResidual::staged);
  EXPECT_EQ(wide_fwd_residual(make_instance(traits(Kernel::fwd, DType::f32, DType::f32), Config{16384, 16, 3, 7, 16},
                                            262144, 4)),
            WideResidual::staged);  // no residual
  expect_invalid(f, c, 262144, 4, "needs 16-byte accesses of x");
  expect_invalid(f, Config{16384, 8, 3, 7, 16}, 262144, 8, "exceeds 32 columns per thread");
  expect_invalid(f, Config{16384, 16, 9, 7, 16}, 262144, 8, "stages 2 to 8 rows");
  expect_invalid(f, Config{16384, 32, 2, 7, 16}, 262144, 8, "takes 2 to 16 warps");
  expect_invalid(f, Config{16384, 16, 2, 7, 16}, 16384 * 15, 8, "every CTA owns columns");
}

TEST(Instance, VecIsLoweredToFitTheTile) {
  const auto k = make_instance(traits(Kernel::fwd), Config{64, 1, 1, 0}, 64, 8);
  EXPECT_EQ(k.vec, 2);  // 32 threads * 2 = 64
  EXPECT_TRUE(k.single_tile);
  const auto t = make_instance(traits(Kernel::fwd), Config{1024, 4, 1, 0}, 5000, 8);
  EXPECT_FALSE(t.single_tile);
}

// A forward whose row fits the CTA (or cluster) but not its registers stages
// the slab in shared memory (fwd_smem.cu.j2), with the dynamic shared memory
// the launcher passes; clusters of 16 are allowed there only.
TEST(Instance, SlabInSharedMemory) {
  Config c{16384, 4, 1, 0};
  c.cluster_size = 4;
  EXPECT_TRUE(forward_in_smem(c, 65536));
  EXPECT_FALSE(forward_in_smem(c, 65537));  // the row does not fit the cluster
  const auto k = make_instance(traits(Kernel::fwd), c, 65536, 8);
  EXPECT_TRUE(stages_in_smem(k));
  EXPECT_EQ(dynamic_smem_bytes(k, 90), 16384 * 2);
  const KernelSource src = render(k);
  EXPECT_NE(src.source.find("#include \"lntune/kernels/fwd_smem.cuh\""), std::string::npos);
  EXPECT_NE(src.source.find("fwd_smem_bytes<Shape>() == 32768"), std::string::npos);
  EXPECT_NE(src.source.find("__cluster_dims__(CLUSTER_SIZE, 1, 1)"), std::string::npos);
  // The residual's slab follows x's, 128-byte aligned.
  Traits r = traits(Kernel::fwd, DType::f16, DType::f16);
  r.residual = DType::f32;
  EXPECT_EQ(dynamic_smem_bytes(make_instance(r, c, 65536, 8), 90), 16384 * 2 + 16384 * 4);
  // Registers (fwd_cluster) when 32 elements per thread or fewer.
  c.num_warps = 16;
  EXPECT_FALSE(forward_in_smem(c, 65536));
  EXPECT_FALSE(stages_in_smem(make_instance(traits(Kernel::fwd), c, 65536, 8)));
  EXPECT_EQ(dynamic_smem_bytes(make_instance(traits(Kernel::fwd), c, 65536, 8), 90), 0);
  EXPECT_FALSE(stages_in_smem(make_instance(traits(Kernel::bwd_dx), Config{8192, 32, 1, 0}, 8192, 8)));
  // Limits.
  Config big{131072, 4, 1, 0};
  expect_invalid(traits(Kernel::fwd, DType::f32, DType::f32), big, 131072, 4,
                 "the slab needs 524288 bytes of shared memory; a CTA has at most 232448 (use a larger cluster_size)");
  big.cluster_size = 16;
  big.block_size = 16384;
  EXPECT_NO_THROW(make_instance(traits(Kernel::fwd, DType::f32, DType::f32), big, 262144, 4));
  big.cluster_size = 32;
  big.block_size = 8192;
  expect_invalid(traits(Kernel::fwd, DType::f32, DType::f32), big, 262144, 4,
                 "cluster_size must be 1 to 16 (slab in shared memory)");
  // Gap clusters (gen::smem_clusters): 5 slabs of 32768 columns for 150000,
  // not for a row that leaves the fifth CTA no columns.
  Config gap{32768, 16, 1, 0};
  gap.cluster_size = 5;
  EXPECT_TRUE(stages_in_smem(make_instance(traits(Kernel::fwd), gap, 150000, 8)));
  expect_invalid(traits(Kernel::fwd), gap, 131072, 8,
                 "a slab in shared memory over other than a power of two of CTAs needs N > (cluster_size - 1) * "
                 "block_size (every CTA owns columns)");
  Config reg{4096, 4, 1, 0};
  reg.cluster_size = 16;
  expect_invalid(traits(Kernel::fwd), reg, 65536, 8, "cluster_size must be 1, 2, 4 or 8");
}

TEST(Instance, CanonicalTraitsShareAnInstance) {
  const auto a = make_instance(traits(Kernel::fwd, DType::f16, DType::f32, false, false), Config{1024, 4, 1, 0}, 1000, 8);
  const auto b = make_instance(traits(Kernel::fwd, DType::f16, DType::f16, false, false), Config{1024, 4, 1, 0}, 1000, 8);
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::hash<InstanceKey>{}(a), std::hash<InstanceKey>{}(b));
  EXPECT_EQ(a.name(), "fwd_fp16_noaffine_b1024_w4_r1_v8_s");
}

// Rendered sources are readable: no leftover template syntax, no runs of
// blank lines, no trailing whitespace, and the config appears as constants
// over the kernel header.
TEST(Instance, RenderedSourceIsCleanCuda) {
  std::unordered_set<std::string> names;
  for (Kernel kernel : {Kernel::fwd, Kernel::bwd_dx, Kernel::bwd_dwdb})
    for (std::int64_t n : {100, 4096, 20000, 65536})
      for (bool weight : {true, false})
        for (bool bias : {true, false}) {
          if (kernel == Kernel::bwd_dwdb && !weight && !bias) continue;
          const Traits t = traits(kernel, DType::bf16, DType::f32, weight, bias);
          for (const Config& c : search_space({kernel, DType::bf16, n, 4096, 132, 90})) {
            const KernelSource s = render(make_instance(t, c, n, 8));
            SCOPED_TRACE(s.kernel_name);
            EXPECT_EQ(s.source.find("{{"), std::string::npos);
            EXPECT_EQ(s.source.find("{%"), std::string::npos);
            EXPECT_EQ(s.source.find("\n\n\n"), std::string::npos);
            EXPECT_EQ(s.source.find(" \n"), std::string::npos);
            EXPECT_EQ(s.source.find("\t"), std::string::npos);
            EXPECT_NE(s.source.find("extern \"C\" __global__"), std::string::npos);
            EXPECT_NE(s.source.find(s.kernel_name + "("), std::string::npos);
            // A thin instance: the constants and the entry over one kernel header.
            EXPECT_NE(s.source.find("#include \"lntune/kernels/"), std::string::npos);
            EXPECT_LE(std::count(s.source.begin(), s.source.end(), '\n'), 30) << s.source;
            EXPECT_NE(s.source.find("NUM_WARPS = " + std::to_string(c.num_warps) + ";"), std::string::npos);
            EXPECT_NE(s.source.find("BLOCK_SIZE = " + std::to_string(c.block_size) + ";"), std::string::npos);
            EXPECT_NE(s.source.find(std::string("HAS_WEIGHT = ") + (weight ? "true" : "false")), std::string::npos);
            EXPECT_NE(s.source.find(std::string("HAS_BIAS = ") + (bias ? "true" : "false")), std::string::npos);
            names.insert(s.kernel_name);
          }
        }
  EXPECT_GT(names.size(), 100u);
}

TEST(Instance, RenderingIsDeterministicAndHashed) {
  const auto key = make_instance(traits(Kernel::bwd_dx), default_config({Kernel::bwd_dx, DType::bf16, 4096}), 4096, 8);
  const KernelSource a = render(key), b = render(key);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(hex(a.hash).size(), 16u);
  const auto other = make_instance(traits(Kernel::bwd_dx, DType::f16), default_config({Kernel::bwd_dx, DType::f16, 4096}), 4096, 8);
  EXPECT_NE(render(other).hash, a.hash);
  EXPECT_NE(templates_hash(), 0u);
}

// Issue 11: the variant is part of an instance's identity (name, equality,
// hash), LayerNorm names are what they were, and the dW/dB reduction is one
// kernel for every variant.
TEST(Instance, NormVariantsNameAndHash) {
  const Config c{1024, 4, 1, 0};
  const InstanceKey ln = make_instance(traits(Kernel::fwd), c, 1024, 8);
  EXPECT_EQ(ln.name(), "fwd_bf16_wbf16_wb_b1024_w4_r1_v8_s");
  std::vector<Traits> vs(5, traits(Kernel::fwd));
  vs[1].norm = Norm::rms;
  vs[2].residual = DType::f32;
  vs[3].zero_centered = true;
  vs[4].y_dtype = DType::f32;
  const char* suffix[] = {"", "_rms", "_rfp32", "_zc", "_ofp32"};
  std::unordered_set<std::size_t> hashes;
  std::unordered_set<std::string> names;
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const InstanceKey k = make_instance(vs[i], c, 1024, 8);
    EXPECT_EQ(k.name(), ln.name() + suffix[i]);
    names.insert(k.name());
    hashes.insert(std::hash<InstanceKey>{}(k));
  }
  EXPECT_EQ(names.size(), vs.size());
  EXPECT_EQ(hashes.size(), vs.size());
  // Canonical: y_dtype = x_dtype is no y_dtype; zero-centred without weight is plain.
  Traits same = traits(Kernel::fwd);
  same.y_dtype = DType::bf16;
  EXPECT_EQ(make_instance(same, c, 1024, 8), ln);
  Traits nw = traits(Kernel::fwd, DType::bf16, DType::bf16, false, true);
  Traits nwz = nw;
  nwz.zero_centered = true;
  EXPECT_EQ(make_instance(nwz, c, 1024, 8), make_instance(nw, c, 1024, 8));
  // bwd_dwdb: the same instance whatever the backward's variant.
  Traits d = traits(Kernel::bwd_dwdb, DType::f32, DType::f32);
  Traits dv = d;
  dv.norm = Norm::rms;
  dv.residual = DType::f32;
  dv.zero_centered = true;
  dv.y_dtype = DType::bf16;
  EXPECT_EQ(make_instance(dv, Config{32, 1, 1, 0}, 1024, 1), make_instance(d, Config{32, 1, 1, 0}, 1024, 1));
  EXPECT_EQ(parse_norm("rms_norm"), Norm::rms);
  EXPECT_EQ(parse_norm("layernorm"), Norm::layer);
  EXPECT_FALSE(parse_norm("batchnorm").has_value());
}

}  // namespace
// The tuner's own kernels are embedded headers that no instance includes:
// the templates' hash (tuned records' staleness, the CUBIN cache) leaves
// them out, and no rendered instance names them.
TEST(Instance, TunerOnlyHeadersAreEmbeddedAndIncludedByNoInstance) {
  for (std::string_view t : templates::kTunerOnlyHeaders) {
    EXPECT_NE(std::find(std::begin(templates::kHeaderNames), std::end(templates::kHeaderNames), t),
              std::end(templates::kHeaderNames))
        << t;
    EXPECT_NO_THROW(templates::get(t)) << t;
  }
  const Traits b = traits(Kernel::bwd_dx);
  for (const InstanceKey& key : {make_instance(b, Config{8192, 16, 3, 16, 8}, 65536, 8),
                                 make_instance(traits(Kernel::fwd), Config{1024, 4, 1, 0}, 1000, 8)}) {
    const std::string src = render(key).source;
    for (std::string_view t : templates::kTunerOnlyHeaders) EXPECT_EQ(src.find(std::string(t)), std::string::npos) << t;
  }
}

}  // namespace lntune::gen
