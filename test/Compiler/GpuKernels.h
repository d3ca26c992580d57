//===- GpuKernels.h - Generated kernels loaded on a GPU for tests -*- C++
//-*-===//
#ifndef GNNC_TEST_COMPILER_GPUKERNELS_H
#define GNNC_TEST_COMPILER_GPUKERNELS_H

#include "gnnc/runtime/Runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace gnnc::test {

/// The kernels of one .gnn text, compiled and loaded on the GPU, or why not:
/// `skipReason` (no GPU) or `error` (anything else).
struct GpuKernels {
  std::unique_ptr<rt::Runtime> runtime;
  std::vector<rt::LoadedKernel> kernels;
  std::string skipReason;
  std::string error;
};

/// Opens the GPU and a runtime in `out.runtime`, or says why not
/// (`skipReason`, `error`); false when there is none.
bool openGpuRuntime(GpuKernels &out);

/// Opens the GPU, compiles `text` (named `bufferName` in messages) and loads
/// every kernel into `out`; with `expected` > 0, a different kernel count
/// is an error.
void loadGpuKernels(GpuKernels &out, const std::string &text,
                    const std::string &bufferName, size_t expected = 0);

} // namespace gnnc::test

#endif // GNNC_TEST_COMPILER_GPUKERNELS_H
