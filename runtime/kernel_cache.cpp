#include "runtime/kernel_cache.hpp"

#include <cstdlib>

#include "runtime/nvrtc.hpp"

namespace lntune::rt {

Cubin obtain_cubin(const gen::KernelSource& src, const std::string& arch, BinaryStore* store, const Log& log,
                   const CubinCompiler& compiler) {
  Cubin out;
  const std::string hash = binary_hash(src, arch, BinaryKind::cubin);
  const int nvrtc = nvrtc_version();
  if (store) {
    if (auto hit = store->get(hash, arch, nvrtc)) {
      out.bytes = std::move(*hit);
      out.from_store = true;
      if (log.debug_enabled()) log.debug("kernel " + src.kernel_name + ": CUBIN for " + arch + " from the cache");
      return out;
    }
  }
  out.bytes = compiler ? compiler(src, arch) : compile(src, arch, BinaryKind::cubin).binary;
  if (log.debug_enabled()) log.debug("kernel " + src.kernel_name + ": compiled for " + arch + " with NVRTC");
  if (store) {
    try {
      store->put(hash, arch, nvrtc, out.bytes, src.kernel_name);
    } catch (const std::exception& ex) {
      log.warn(std::string("could not store the CUBIN of ") + src.kernel_name + ": " + ex.what());
    }
  }
  return out;
}

std::size_t KernelCache::KeyHash::operator()(const Key& k) const noexcept {
  return std::hash<InstanceKey>{}(k.inst) ^ (std::hash<const void*>{}(k.ctx) << 1);
}

namespace {
// "sm_90" -> 90 (nvrtc.cpp has checked the form).
int arch_number(const std::string& arch) { return arch.size() > 3 ? std::atoi(arch.c_str() + 3) : 0; }
}  // namespace

void KernelCache::build(Entry& e, CUcontext ctx, const std::string& arch, const InstanceKey& key, BinaryStore* store,
                        const Log& log) {
  const gen::KernelSource src = gen::render(key);
  const Cubin cubin = obtain_cubin(src, arch, store, log);
  ++(cubin.from_store ? from_store_ : compiled_);
  const DriverApi& d = driver();
  check(d.CtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule mod = nullptr;
  check(d.ModuleLoadData(&mod, cubin.bytes.data()), "cuModuleLoadData(" + src.kernel_name + ", " + arch + ")");
  e.module.reset(mod);
  check(d.ModuleGetFunction(&e.kernel.fn, mod, src.kernel_name.c_str()), "cuModuleGetFunction(" + src.kernel_name + ")");
  check(d.FuncGetAttribute(&e.kernel.max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, e.kernel.fn),
        "cuFuncGetAttribute(" + src.kernel_name + ")");
  // Kernels with a slab or staged rows in shared memory (fwd_smem, the wide-row
  // backward, the register backward's staged rows): allow their dynamic shared
  // memory (above the 48 KB default; both entries of the backward) and
  // clusters of 16 CTAs (non-portable).
  const std::int64_t smem = gen::dynamic_smem_bytes(key, arch_number(arch));
  const auto allow_smem = [&](CUfunction f, const std::string& name) {
    if (smem > 0)
      check(d.FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(smem)),
            "cuFuncSetAttribute(" + name + ", MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(smem) + ")");
  };
  allow_smem(e.kernel.fn, src.kernel_name);
  e.kernel.dynamic_smem = static_cast<unsigned>(smem);
  if (key.cluster_size > 8)
    check(d.FuncSetAttribute(e.kernel.fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
          "cuFuncSetAttribute(" + src.kernel_name + ", NON_PORTABLE_CLUSTER_SIZE_ALLOWED)");
  if (key.cluster_size > 1) {
    // The cluster shape is the kernel's own (__cluster_dims__): the launch
    // config leaves it out, and its grid is any multiple of it.
    CUlaunchConfig cfg{};
    cfg.gridDimX = static_cast<unsigned>(key.cluster_size);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = static_cast<unsigned>(32 * key.num_warps);
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = e.kernel.dynamic_smem;
    check(d.OccupancyMaxActiveClusters(&e.kernel.max_active_clusters, e.kernel.fn, &cfg),
          "cuOccupancyMaxActiveClusters(" + src.kernel_name + ")");
  }
  if (!src.finish_kernel_name.empty()) {
    check(d.ModuleGetFunction(&e.kernel.finish_fn, mod, src.finish_kernel_name.c_str()),
          "cuModuleGetFunction(" + src.finish_kernel_name + ")");
    allow_smem(e.kernel.finish_fn, src.finish_kernel_name);
    int per_sm = 0, sms = 0;
    CUdevice dev = 0;
    check(d.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, e.kernel.finish_fn, 32 * key.num_warps,
                                                      e.kernel.dynamic_smem),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + src.finish_kernel_name + ")");
    check(d.CtxGetDevice(&dev), "cuCtxGetDevice");
    check(d.DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
          "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
    e.kernel.cooperative_ctas = static_cast<std::int64_t>(per_sm) * sms;
    e.kernel.sm_count = sms;
  }
  e.kernel.programmatic = key.traits.kernel == Kernel::bwd_dwdb && arch_number(arch) >= 90;
  e.kernel.name = src.kernel_name;
  ++loaded_;
}

const LoadedKernel& KernelCache::get(CUcontext ctx, const std::string& arch, const InstanceKey& key,
                                     BinaryStore* store, const Log& log) {
  const Key k{ctx, key};
  std::shared_ptr<Entry> e;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = entries_.find(k);
    if (it != entries_.end()) e = it->second;
  }
  if (!e) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto& slot = entries_[k];
    if (!slot) slot = std::make_shared<Entry>();
    e = slot;
  }
  // A failed build throws out of call_once, leaving the flag unset: the next
  // call retries.
  std::call_once(e->once, [&] { build(*e, ctx, arch, key, store, log); });
  return e->kernel;
}

KernelCacheStats KernelCache::stats() const {
  return KernelCacheStats{compiled_.load(), from_store_.load(), loaded_.load()};
}

}  // namespace lntune::rt
