//===- FuzzMatrixMarket.cpp - Fuzz target: Matrix Market (.mtx) -----------===//
//
// graph::parseMatrixMarket on the input as a file's contents (a gzip
// stream in the input is decoded, as readMatrixMarket decodes .mtx.gz).
// A graph it returns must be a valid CSR graph.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "gnnc/graph/Readers.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  gnnc::fuzz::limitReaderMemory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gnnc::fuzz::checkGraph(gnnc::graph::parseMatrixMarket(
      "fuzz.mtx", gnnc::fuzz::asText(data, size)));
  return 0;
}
