//===- FuzzSnap.cpp - Fuzz target: SNAP edge lists ------------------------===//
//
// graph::parseSnapEdgeList; the first byte chooses the options
// (symmetrize, remove self loops, compact ids, weights, a node count).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "gnnc/graph/Readers.h"

#include <vector>

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  gnnc::fuzz::limitReaderMemory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  uint8_t flags = data[0];
  gnnc::graph::SnapOptions options;
  options.symmetrize = flags & 1;
  options.removeSelfLoops = flags & 2;
  options.compactIds = flags & 4;
  options.useWeights = flags & 8;
  options.numNodes = (flags & 16) ? (flags >> 5) * 1000 : 0;
  std::vector<int64_t> ids;
  gnnc::Expected<gnnc::graph::CsrGraph> g = gnnc::graph::parseSnapEdgeList(
      "fuzz.txt", gnnc::fuzz::asText(data + 1, size - 1), options, &ids);
  gnnc::fuzz::checkGraph(g);
  if (g && options.compactIds && options.numNodes == 0 &&
      static_cast<int64_t>(ids.size()) != g->numRows)
    __builtin_trap();
  return 0;
}
