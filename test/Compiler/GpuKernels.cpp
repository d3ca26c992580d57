//===- GpuKernels.cpp - Generated kernels loaded on a GPU for tests -------===//
#include "GpuKernels.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/runtime/Driver.h"

using namespace gnnc;

bool gnnc::test::openGpuRuntime(GpuKernels &out) {
  std::string why;
  if (!rt::gpuAvailable(&why)) {
    out.skipReason = "no GPU: " + why;
    return false;
  }
  auto runtime = rt::Runtime::create();
  if (!runtime) {
    out.error = runtime.message();
    return false;
  }
  out.runtime = std::make_unique<rt::Runtime>(runtime.take());
  return true;
}

void gnnc::test::loadGpuKernels(GpuKernels &out, const std::string &text,
                                const std::string &bufferName,
                                size_t expected) {
  if (!openGpuRuntime(out))
    return;
  auto compiled = compileGnn(text, bufferName);
  if (!compiled) {
    out.error = compiled.message();
    return;
  }
  if (expected > 0 && compiled->kernels.size() != expected) {
    out.error = "compiled " + std::to_string(compiled->kernels.size()) +
                " kernels, expected " + std::to_string(expected);
    return;
  }
  for (const rt::KernelSpec &spec : compiled->kernels) {
    auto loaded = out.runtime->load(spec);
    if (!loaded) {
      out.error = loaded.message();
      return;
    }
    out.kernels.push_back(loaded.take());
  }
}
