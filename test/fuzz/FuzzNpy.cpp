//===- FuzzNpy.cpp - Fuzz target: .npy arrays -----------------------------===//
//
// graph::parseNpy on the input as a .npy file's bytes, then the element
// conversions of what it accepts.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "gnnc/graph/Readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gnnc::Expected<gnnc::graph::NpyArray> array =
      gnnc::graph::parseNpy(data, size, "fuzz.npy");
  if (array)
    gnnc::fuzz::convertArray(*array);
  return 0;
}
