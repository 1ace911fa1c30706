#include "runtime/kernel_cache.hpp"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "generator/instance.hpp"
#include "runtime/driver.hpp"
#include "runtime/log.hpp"
#include "runtime/nvrtc.hpp"

namespace lntune::rt {
namespace {

struct Key {
  CUcontext ctx;
  InstanceKey inst;
  bool operator==(const Key& o) const { return ctx == o.ctx && inst == o.inst; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    return std::hash<InstanceKey>{}(k.inst) ^ (std::hash<const void*>{}(k.ctx) << 1);
  }
};

struct Entry {
  std::once_flag once;
  UniqueModule module;
  LoadedKernel kernel;
};

struct State {
  std::shared_mutex mu;
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> entries;
  std::mutex store_mu;
  std::shared_ptr<BinaryStore> store;
  std::atomic<std::uint64_t> compiled{0}, from_store{0}, loaded{0};
};

State& state() {
  static State* s = new State;  // never destroyed: modules outlive static teardown safely
  return *s;
}

std::shared_ptr<BinaryStore> current_store() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.store_mu);
  return s.store;
}

void build(Entry& e, CUcontext ctx, const std::string& arch, const InstanceKey& key) {
  State& s = state();
  const gen::KernelSource src = gen::render(key);
  const std::string hash = gen::hex(src.hash);
  const int nvrtc = nvrtc_version();
  std::vector<char> cubin;
  auto store = current_store();
  if (store) {
    if (auto hit = store->get(hash, arch, nvrtc)) {
      cubin = std::move(*hit);
      ++s.from_store;
      log_debug("kernel " + src.kernel_name + ": CUBIN for " + arch + " from the cache");
    }
  }
  if (cubin.empty()) {
    CompiledKernel c = compile(src, arch, BinaryKind::cubin);
    ++s.compiled;
    log_debug("kernel " + src.kernel_name + ": compiled for " + arch + " with NVRTC");
    cubin = std::move(c.binary);
    if (store) {
      try {
        store->put(hash, arch, nvrtc, cubin, src.kernel_name);
      } catch (const std::exception& ex) {
        log_warn(std::string("could not store the CUBIN of ") + src.kernel_name + ": " + ex.what());
      }
    }
  }
  const DriverApi& d = driver();
  check(d.CtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule mod = nullptr;
  check(d.ModuleLoadData(&mod, cubin.data()), "cuModuleLoadData(" + src.kernel_name + ", " + arch + ")");
  e.module.reset(mod);
  check(d.ModuleGetFunction(&e.kernel.fn, mod, src.kernel_name.c_str()), "cuModuleGetFunction(" + src.kernel_name + ")");
  check(d.FuncGetAttribute(&e.kernel.max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, e.kernel.fn),
        "cuFuncGetAttribute(" + src.kernel_name + ")");
  e.kernel.name = src.kernel_name;
  ++s.loaded;
}

}  // namespace

const LoadedKernel& get_kernel(CUcontext ctx, const std::string& arch, const InstanceKey& key) {
  State& s = state();
  const Key k{ctx, key};
  std::shared_ptr<Entry> e;
  {
    std::shared_lock<std::shared_mutex> lock(s.mu);
    auto it = s.entries.find(k);
    if (it != s.entries.end()) e = it->second;
  }
  if (!e) {
    std::unique_lock<std::shared_mutex> lock(s.mu);
    auto& slot = s.entries[k];
    if (!slot) slot = std::make_shared<Entry>();
    e = slot;
  }
  // A failed build throws out of call_once, leaving the flag unset: the next
  // call retries.
  std::call_once(e->once, [&] { build(*e, ctx, arch, key); });
  return e->kernel;
}

KernelCacheStats kernel_cache_stats() {
  State& s = state();
  return KernelCacheStats{s.compiled.load(), s.from_store.load(), s.loaded.load()};
}

std::shared_ptr<BinaryStore> set_binary_store(std::shared_ptr<BinaryStore> store) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.store_mu);
  std::swap(s.store, store);
  return store;
}

}  // namespace lntune::rt
