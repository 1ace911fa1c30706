#include "tuner/tool_module.hpp"

#include "generator/instance.hpp"
#include "runtime/driver.hpp"
#include "runtime/nvrtc.hpp"

namespace lntune::tune {

ToolModule::ToolModule(const std::string& header, const std::string& arch, const std::string& what) {
  gen::KernelSource src;
  src.kernel_name = "lntune_tool";
  src.source = "#include \"" + header + "\"\n";
  const rt::CompiledKernel k = rt::compile(src, arch);
  const rt::DriverApi& d = rt::driver();
  rt::check(d.ModuleLoadData(&module_, k.binary.data()), "cuModuleLoadData (" + what + ")");
  try {
    CUdevice dev = 0;
    rt::check(d.CtxGetDevice(&dev), "cuCtxGetDevice");
    rt::check(d.DeviceGetAttribute(&sm_count_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
              "cuDeviceGetAttribute (SM count)");
  } catch (...) {
    d.ModuleUnload(module_);
    throw;
  }
}

ToolModule::~ToolModule() {
  if (module_) rt::driver().ModuleUnload(module_);
}

CUfunction ToolModule::function(const char* name) const {
  CUfunction f = nullptr;
  rt::check(rt::driver().ModuleGetFunction(&f, module_, name), std::string("cuModuleGetFunction (") + name + ")");
  return f;
}

}  // namespace lntune::tune
