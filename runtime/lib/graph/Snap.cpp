//===- Snap.cpp - SNAP edge list reader -----------------------------------===//

#include "gnnc/graph/Readers.h"

#include "ReaderSupport.h"

#include <algorithm>
#include <string_view>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::graph::detail;

namespace {

Expected<CsrGraph> parseText(const std::string &path, const std::string &text,
                             const SnapOptions &options,
                             std::vector<int64_t> *originalIds) {
  Expected<GraphBudget> budget = GraphBudget::current(path);
  if (!budget)
    return budget.status();
  LineReader lines(path, text);
  if (options.numNodes < 0 || options.numNodes > kMaxReaderDimension)
    return Status::error(path + ": invalid node count option " +
                         std::to_string(options.numNodes));
  if (options.numNodes > 0) {
    std::string over =
        budget->check(options.numNodes, options.numNodes, 0, "graph");
    if (!over.empty())
      return Status::error(path + ": " + over);
  }

  std::vector<int64_t> src, dst;
  std::vector<float> weights;
  int64_t maxId = -1;
  std::string_view line;
  std::string_view tok[4];
  while (lines.next(line)) {
    size_t i = 0;
    while (i < line.size() && isSpace(line[i]))
      ++i;
    if (i == line.size() || line[i] == '#' || line[i] == '%')
      continue;
    size_t n = tokenize(line, tok, 3);
    if (n < 2)
      return lines.error(
          "expected 'source destination [weight]', found one field");
    if (n > 3)
      return lines.error(
          "expected 'source destination [weight]', found more than "
          "three fields");
    int64_t u, v;
    if (!parseInt(tok[0], u))
      return lines.error("malformed node id " + quoted(tok[0]));
    if (!parseInt(tok[1], v))
      return lines.error("malformed node id " + quoted(tok[1]));
    if (u < 0 || v < 0)
      return lines.error("negative node id " + std::to_string(u < 0 ? u : v));
    if (options.numNodes > 0 &&
        (u >= options.numNodes || v >= options.numNodes))
      return lines.error(
          "node id " + std::to_string(u >= options.numNodes ? u : v) +
          " is out of range [0, " + std::to_string(options.numNodes) + ")");
    if (!options.compactIds &&
        (u >= kMaxReaderDimension || v >= kMaxReaderDimension))
      return lines.error("node id " + std::to_string(std::max(u, v)) +
                         " is too large (use compact ids)");
    float w = 1.0f;
    if (n == 3) {
      double dw;
      if (!parseReal(tok[2], dw))
        return lines.error("malformed weight " + quoted(tok[2]));
      w = static_cast<float>(dw);
    } else if (options.useWeights) {
      return lines.error("missing weight (third field)");
    }
    if (options.removeSelfLoops && u == v)
      continue;
    // The graph so far, against the budget (the node count is the largest
    // id + 1, or with compact ids at most two per edge).
    int64_t edges = static_cast<int64_t>(src.size()) + 1;
    int64_t entries = options.symmetrize ? 2 * edges : edges;
    int64_t nodes = options.numNodes > 0 ? options.numNodes
                    : options.compactIds ? 2 * edges
                                         : std::max(maxId, std::max(u, v)) + 1;
    std::string over = budget->check(nodes, nodes, entries);
    if (!over.empty())
      return lines.error(over);
    src.push_back(u);
    dst.push_back(v);
    if (options.useWeights)
      weights.push_back(w);
    maxId = std::max(maxId, std::max(u, v));
  }

  // (With compact ids, the ids may go up to INT64_MAX: their count is set
  // below.)
  int64_t numNodes = options.numNodes > 0 ? options.numNodes
                     : options.compactIds ? 0
                                          : maxId + 1;
  if (options.compactIds) {
    std::vector<int64_t> ids(src);
    ids.insert(ids.end(), dst.begin(), dst.end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    auto index = [&](int64_t id) {
      return static_cast<int64_t>(std::lower_bound(ids.begin(), ids.end(), id) -
                                  ids.begin());
    };
    for (int64_t &u : src)
      u = index(u);
    for (int64_t &v : dst)
      v = index(v);
    if (options.numNodes == 0)
      numNodes = static_cast<int64_t>(ids.size());
    if (originalIds)
      *originalIds = std::move(ids);
  }
  if (options.symmetrize) {
    size_t m = src.size();
    for (size_t e = 0; e < m; ++e) {
      if (src[e] == dst[e])
        continue;
      src.push_back(dst[e]);
      dst.push_back(src[e]);
      if (options.useWeights)
        weights.push_back(weights[e]);
    }
  }
  return csrFromEntries(path, numNodes, numNodes, src, dst, weights);
}

} // namespace

Expected<CsrGraph> gnnc::graph::parseSnapEdgeList(
    const std::string &path, std::string_view contents,
    const SnapOptions &options, std::vector<int64_t> *originalIds) {
  return guardAllocation<CsrGraph>(path, [&]() -> Expected<CsrGraph> {
    Expected<std::string> text = decodeText(path, contents);
    if (!text)
      return text.status();
    return parseText(path, *text, options, originalIds);
  });
}

Expected<CsrGraph>
gnnc::graph::readSnapEdgeList(const std::string &path,
                              const SnapOptions &options,
                              std::vector<int64_t> *originalIds) {
  return guardAllocation<CsrGraph>(path, [&]() -> Expected<CsrGraph> {
    Expected<std::string> text = readTextFile(path);
    if (!text)
      return text.status();
    return parseText(path, *text, options, originalIds);
  });
}
