//===- FuzzNpz.cpp - Fuzz target: .npz archives ---------------------------===//
//
// graph::parseNpzCsr on the input as an archive's bytes, then every member
// of it through NpzFile::get and the element conversions.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "gnnc/graph/Readers.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  gnnc::fuzz::limitReaderMemory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  gnnc::fuzz::checkGraph(gnnc::graph::parseNpzCsr("fuzz.npz", bytes));
  gnnc::Expected<gnnc::graph::NpzFile> npz =
      gnnc::graph::parseNpz("fuzz.npz", std::move(bytes));
  if (!npz)
    return 0;
  for (const std::string &name : npz->names()) {
    gnnc::Expected<gnnc::graph::NpyArray> array = npz->get(name);
    if (array)
      gnnc::fuzz::convertArray(*array);
  }
  return 0;
}
