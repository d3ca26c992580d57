//===- Batch.cpp - Batches of small graphs --------------------------------===//
#include "gnnc/graph/Batch.h"

#include "gnnc/graph/Random.h"
#include "gnnc/graph/Readers.h"

#include "ReaderSupport.h"

#include <algorithm>
#include <cmath>

using namespace gnnc;
using namespace gnnc::graph;

int64_t BatchedGraph::maxNodes() const {
  int64_t most = 0;
  for (int64_t g = 0; g < numGraphs(); ++g)
    most = std::max(most, numNodes(g));
  return most;
}

namespace {

std::string at(const char *name, int64_t i, int64_t value) {
  return std::string(name) + "[" + std::to_string(i) +
         "] = " + std::to_string(value);
}

/// The rules of BatchedGraph::validate; `where(member)` prefixes a message
/// about a member ("graph_ptr", "indices") with its place.
template <typename Where>
Status checkBatch(const BatchedGraph &b, bool allowEmptyGraphs, Where &&where) {
  const CsrGraph &g = b.graph;
  if (Status s = g.validate(); !s)
    return s.withContext(where("indptr"));
  if (g.numRows != g.numCols)
    return Status::error(where("num_nodes") +
                         "a batch is square: " + std::to_string(g.numRows) +
                         " rows but " + std::to_string(g.numCols) + " columns");
  const std::vector<int64_t> &gp = b.graphPtr;
  if (gp.empty())
    return Status::error(where("graph_ptr") +
                         "empty; it needs one entry more than the graphs "
                         "(0 for a batch of no graphs)");
  if (gp.front() != 0)
    return Status::error(where("graph_ptr") + "starts at " +
                         std::to_string(gp.front()) +
                         "; the first graph starts at node 0");
  for (size_t i = 1; i < gp.size(); ++i) {
    if (gp[i] < gp[i - 1])
      return Status::error(
          where("graph_ptr") + "not sorted: " +
          at("graph_ptr", static_cast<int64_t>(i), gp[i]) + " is below " +
          at("graph_ptr", static_cast<int64_t>(i) - 1, gp[i - 1]));
    if (gp[i] == gp[i - 1] && !allowEmptyGraphs)
      return Status::error(where("graph_ptr") + "graph " +
                           std::to_string(i - 1) + " has no nodes (graph_ptr[" +
                           std::to_string(i - 1) + "] = graph_ptr[" +
                           std::to_string(i) + "] = " + std::to_string(gp[i]) +
                           "); empty graphs are not allowed here");
  }
  if (gp.back() != g.numRows)
    return Status::error(where("graph_ptr") + "ends at " +
                         std::to_string(gp.back()) + ", but the batch has " +
                         std::to_string(g.numRows) + " nodes");
  const std::vector<int64_t> &ep = b.edgeGraphPtr;
  if (ep.size() != gp.size())
    return Status::error(where("edge_graph_ptr") + "has " +
                         std::to_string(ep.size()) + " entries, graph_ptr " +
                         std::to_string(gp.size()));
  for (size_t i = 0; i < gp.size(); ++i)
    if (ep[i] != g.rowPtr[gp[i]])
      return Status::error(
          where("edge_graph_ptr") + at("edge_graph_ptr", int64_t(i), ep[i]) +
          ", but the rows of graph " + std::to_string(i) +
          " start at non-zero indptr[" + std::to_string(gp[i]) +
          "] = " + std::to_string(g.rowPtr[gp[i]]));
  for (int64_t k = 0; k < b.numGraphs(); ++k)
    for (int64_t r = gp[k]; r < gp[k + 1]; ++r)
      for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
        if (g.colIdx[e] < gp[k] || g.colIdx[e] >= gp[k + 1])
          return Status::error(
              where("indices") + "non-zero " + std::to_string(e) + " (row " +
              std::to_string(r) + ", graph " + std::to_string(k) +
              " of nodes [" + std::to_string(gp[k]) + ", " +
              std::to_string(gp[k + 1]) + ")) names node " +
              std::to_string(g.colIdx[e]) +
              ", outside its graph; an edge stays inside its graph");
  return Status::ok();
}

} // namespace

Status BatchedGraph::validate(bool allowEmptyGraphs) const {
  return checkBatch(*this, allowEmptyGraphs, [](const char *member) {
    return std::string("batch: ") + member + ": ";
  });
}

Expected<BatchedGraph> gnnc::graph::collate(const std::vector<CsrGraph> &gs) {
  size_t withValues = 0;
  for (size_t k = 0; k < gs.size(); ++k) {
    if (gs[k].numRows != gs[k].numCols)
      return Status::error("collate: graph " + std::to_string(k) + " is " +
                           std::to_string(gs[k].numRows) + " x " +
                           std::to_string(gs[k].numCols) +
                           "; the graphs of a batch are square (rows are "
                           "their nodes)");
    if (Status s = gs[k].validate(); !s)
      return s.withContext("collate: graph " + std::to_string(k));
    withValues += gs[k].hasValues() ? 1 : 0;
  }
  if (withValues != 0 && withValues != gs.size())
    return Status::error("collate: " + std::to_string(withValues) + " of " +
                         std::to_string(gs.size()) +
                         " graphs have edge values; give all or none");
  BatchedGraph b;
  b.graphPtr.push_back(0);
  b.edgeGraphPtr.push_back(0);
  CsrGraph &out = b.graph;
  out.rowPtr.push_back(0);
  for (const CsrGraph &g : gs) {
    int64_t base = b.graphPtr.back();
    for (int64_t r = 0; r < g.numRows; ++r)
      out.rowPtr.push_back(out.rowPtr.back() + g.degree(r));
    for (int64_t c : g.colIdx)
      out.colIdx.push_back(base + c);
    out.values.insert(out.values.end(), g.values.begin(), g.values.end());
    b.graphPtr.push_back(base + g.numRows);
    b.edgeGraphPtr.push_back(out.rowPtr.back());
  }
  out.numRows = out.numCols = b.graphPtr.back();
  out.name = "batch of " + std::to_string(gs.size()) + " graphs";
  return b;
}

CsrGraph gnnc::graph::graphOf(const BatchedGraph &b, int64_t k) {
  CsrGraph g;
  const int64_t n0 = b.graphPtr[k], n1 = b.graphPtr[k + 1];
  const int64_t e0 = b.edgeGraphPtr[k];
  g.numRows = g.numCols = n1 - n0;
  for (int64_t r = n0; r <= n1; ++r)
    g.rowPtr.push_back(b.graph.rowPtr[r] - e0);
  for (int64_t e = e0; e < b.edgeGraphPtr[k + 1]; ++e) {
    g.colIdx.push_back(b.graph.colIdx[e] - n0);
    if (b.graph.hasValues())
      g.values.push_back(b.graph.values[e]);
  }
  g.name = b.graph.name + ", graph " + std::to_string(k);
  return g;
}

std::vector<std::vector<float>>
gnnc::graph::splitRows(const BatchedGraph &b, const std::vector<float> &rows,
                       int64_t width) {
  std::vector<std::vector<float>> out(b.numGraphs());
  for (int64_t k = 0; k < b.numGraphs(); ++k)
    out[k].assign(rows.begin() + b.graphPtr[k] * width,
                  rows.begin() + b.graphPtr[k + 1] * width);
  return out;
}

std::vector<int64_t> gnnc::graph::nodeGraphs(const BatchedGraph &b) {
  std::vector<int64_t> of(b.graph.numRows);
  for (int64_t k = 0; k < b.numGraphs(); ++k)
    std::fill(of.begin() + b.graphPtr[k], of.begin() + b.graphPtr[k + 1], k);
  return of;
}

Expected<BatchedGraph> gnnc::graph::withSelfLoops(const BatchedGraph &b) {
  if (Status s = b.validate(); !s)
    return s.withContext("withSelfLoops");
  const CsrGraph &g = b.graph;
  BatchedGraph out;
  out.graphPtr = b.graphPtr;
  CsrGraph &o = out.graph;
  o.numRows = o.numCols = g.numRows;
  o.name = g.name;
  o.rowPtr.reserve(g.rowPtr.size());
  o.colIdx.reserve(g.colIdx.size() + g.numRows);
  if (g.hasValues())
    o.values.reserve(g.values.size() + g.numRows);
  o.rowPtr.push_back(0);
  for (int64_t r = 0; r < g.numRows; ++r) {
    const int64_t begin = g.rowPtr[r], end = g.rowPtr[r + 1];
    bool hasLoop = false;
    for (int64_t e = begin; e < end && !hasLoop; ++e)
      hasLoop = g.colIdx[e] == r;
    bool placed = hasLoop;
    for (int64_t e = begin; e < end; ++e) {
      if (!placed && g.colIdx[e] > r) {
        o.colIdx.push_back(r);
        if (g.hasValues())
          o.values.push_back(1.0f);
        placed = true;
      }
      o.colIdx.push_back(g.colIdx[e]);
      if (g.hasValues())
        o.values.push_back(g.values[e]);
    }
    if (!placed) {
      o.colIdx.push_back(r);
      if (g.hasValues())
        o.values.push_back(1.0f);
    }
    o.rowPtr.push_back(o.nnz());
  }
  for (int64_t n : out.graphPtr)
    out.edgeGraphPtr.push_back(o.rowPtr[n]);
  return out;
}

std::vector<int64_t>
gnnc::graph::batchBlocks(const std::vector<int64_t> &gp,
                         const std::vector<int64_t> &rowPtr, int64_t tileRows,
                         int64_t tileEdges, int64_t graphsPerBlock) {
  std::vector<int64_t> blocks;
  const int64_t graphs = static_cast<int64_t>(gp.size()) - 1;
  int64_t rows = static_cast<int64_t>(rowPtr.size()) - 1;
  auto fits = [&](int64_t first, int64_t end) {
    return gp[end] - gp[first] <= tileRows &&
           rowPtr[gp[end]] - rowPtr[gp[first]] <= tileEdges;
  };
  for (int64_t g = 0; g < graphs;) {
    if (!fits(g, g + 1)) {
      for (int64_t r = gp[g]; r < gp[g + 1]; r += tileRows) {
        blocks.push_back(r | kBatchBlockFromGlobal);
        blocks.push_back(rowPtr[r]);
      }
      ++g;
      continue;
    }
    int64_t end = g + 1;
    while (end < graphs && (graphsPerBlock == 0 || end - g < graphsPerBlock) &&
           fits(g, end + 1))
      ++end;
    // A run of empty graphs makes no block.
    if (gp[end] > gp[g]) {
      blocks.push_back(gp[g]);
      blocks.push_back(rowPtr[gp[g]]);
    }
    g = end;
  }
  if (blocks.empty()) {
    blocks.push_back(0);
    blocks.push_back(0);
  }
  rows = std::max<int64_t>(rows, 0);
  blocks.push_back(rows);
  blocks.push_back(rowPtr.empty() ? 0 : rowPtr[rows]);
  return blocks;
}

//===----------------------------------------------------------------------===//
// TU batches from .npz
//===----------------------------------------------------------------------===//

namespace {

Expected<BatchedGraph> tuBatchOf(const std::string &path,
                                 std::vector<uint8_t> bytes,
                                 const BatchReadOptions &options) {
  Expected<NpzFile> npz = parseNpz(path, bytes);
  if (!npz)
    return npz.status();
  auto memberError = [&](const std::string &member, const std::string &msg) {
    return Status::error(path + ": member '" + member + "': " + msg);
  };
  auto pointers = [&](const std::string &member,
                      std::vector<int64_t> &out) -> Status {
    Expected<std::vector<int64_t>> v = detail::npzIntegers(path, *npz, member);
    if (!v)
      return v.status();
    out = v.take();
    return Status::ok();
  };
  if (!npz->has("graph_ptr"))
    return Status::error(path + ": no member 'graph_ptr' (the first node of "
                                "each graph); not a batch of graphs");
  BatchedGraph b;
  GNNC_RETURN_IF_ERROR(pointers("graph_ptr", b.graphPtr));
  // The CSR members, read and checked by the CSR reader of the same bytes.
  Expected<CsrGraph> g = parseNpzCsr(path, std::move(bytes));
  if (!g)
    return g.status();
  b.graph = g.take();
  if (npz->has("edge_graph_ptr")) {
    GNNC_RETURN_IF_ERROR(pointers("edge_graph_ptr", b.edgeGraphPtr));
  } else {
    for (int64_t n : b.graphPtr)
      b.edgeGraphPtr.push_back(
          n >= 0 && n <= b.graph.numRows ? b.graph.rowPtr[n] : -1);
  }
  // Positions before checkBatch reads the row offsets at them.
  for (size_t i = 0; i < b.graphPtr.size(); ++i)
    if (b.graphPtr[i] < 0 || b.graphPtr[i] > b.graph.numRows)
      return memberError("graph_ptr",
                         at("graph_ptr", int64_t(i), b.graphPtr[i]) +
                             " is outside the nodes [0, " +
                             std::to_string(b.graph.numRows) + "]");
  Status valid =
      checkBatch(b, options.allowEmptyGraphs, [&](const char *member) {
        return path + ": member '" + member + "': ";
      });
  if (!valid)
    return valid;
  b.graph.name =
      detail::withoutSuffix(path.substr(path.find_last_of('/') + 1), ".npz");
  return b;
}

} // namespace

Expected<BatchedGraph>
gnnc::graph::parseTuBatch(const std::string &path, std::vector<uint8_t> bytes,
                          const BatchReadOptions &options) {
  return detail::guardAllocation<BatchedGraph>(
      path, [&]() -> Expected<BatchedGraph> {
        return tuBatchOf(path, std::move(bytes), options);
      });
}

Expected<BatchedGraph>
gnnc::graph::readTuBatch(const std::string &path,
                         const BatchReadOptions &options) {
  return detail::guardAllocation<BatchedGraph>(
      path, [&]() -> Expected<BatchedGraph> {
        Expected<std::vector<uint8_t>> bytes = detail::readBinaryFile(path);
        if (!bytes)
          return bytes.status();
        return tuBatchOf(path, bytes.take(), options);
      });
}

//===----------------------------------------------------------------------===//
// Molecule-like batches
//===----------------------------------------------------------------------===//

MoleculeBatchOptions gnnc::graph::proteinLikeOptions(int64_t numGraphs) {
  MoleculeBatchOptions o;
  o.numGraphs = numGraphs;
  o.meanNodes = 39.1;
  o.stddevNodes = 45.8;
  o.minNodes = 4;
  o.maxNodes = 620;
  o.maxDegree = 6;
  o.ringFraction = 0.3;
  o.ringSize = 4;
  return o;
}

BatchedGraph gnnc::graph::generateMoleculeBatch(const MoleculeBatchOptions &o,
                                                uint64_t seed) {
  // Log-normal sizes with the requested mean m and deviation s:
  // sigma^2 = ln(1 + s^2 / m^2), mu = ln(m) - sigma^2 / 2.
  const double m = std::max(1.0, o.meanNodes), s = std::max(0.0, o.stddevNodes);
  const double sigma2 = std::log(1.0 + (s * s) / (m * m));
  const double mu = std::log(m) - sigma2 / 2;
  std::vector<CsrGraph> graphs;
  graphs.reserve(o.numGraphs);
  for (int64_t k = 0; k < o.numGraphs; ++k) {
    Rng rng(deriveSeed(seed, static_cast<uint64_t>(k)));
    // Box-Muller from two uniforms (portable, unlike std:: distributions).
    double u1 = std::max(rng.nextDouble(), 0x1p-53), u2 = rng.nextDouble();
    double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
    int64_t n = std::llround(std::exp(mu + std::sqrt(sigma2) * z));
    n = std::clamp(n, o.minNodes, std::max(o.minNodes, o.maxNodes));
    std::vector<int64_t> rows, cols, degree(n, 0);
    auto bond = [&](int64_t a, int64_t b) {
      rows.push_back(a), cols.push_back(b);
      rows.push_back(b), cols.push_back(a);
      ++degree[a], ++degree[b];
    };
    for (int64_t v = 1; v < n; ++v) {
      // A chain with branches: attach to one of the last few nodes that
      // still has a free valence, else to the previous node.
      int64_t parent = v - 1;
      for (int tries = 0; tries < 4; ++tries) {
        int64_t back = 1 + static_cast<int64_t>(rng.nextBelow(3));
        int64_t p = std::max<int64_t>(0, v - back);
        if (degree[p] < o.maxDegree) {
          parent = p;
          break;
        }
      }
      bond(parent, v);
      int64_t ringTo = v - (o.ringSize - 1);
      if (ringTo >= 0 && ringTo != parent &&
          rng.nextDouble() < o.ringFraction && degree[v] < o.maxDegree &&
          degree[ringTo] < o.maxDegree)
        bond(ringTo, v);
    }
    Expected<CsrGraph> g = fromCoo(n, n, rows, cols, {}, Duplicates::KeepFirst);
    graphs.push_back(g ? g.take() : CsrGraph{});
  }
  Expected<BatchedGraph> b = collate(graphs);
  BatchedGraph out = b ? b.take() : BatchedGraph{};
  out.graph.name =
      "molecules" + std::to_string(o.numGraphs) + "_s" + std::to_string(seed);
  return out;
}

CsrGraph gnnc::graph::moleculeGraph(int64_t nodes, int32_t maxDegree,
                                    uint64_t seed) {
  MoleculeBatchOptions o;
  o.numGraphs = 1;
  o.meanNodes = double(nodes);
  o.stddevNodes = 0;
  o.minNodes = o.maxNodes = nodes;
  o.maxDegree = maxDegree;
  o.ringFraction = 0.5;
  return graphOf(generateMoleculeBatch(o, seed), 0);
}

BatchedGraph gnnc::graph::raggedBatch() {
  CsrGraph empty, single, loop;
  empty.rowPtr = {0};
  single.numRows = single.numCols = 1;
  single.rowPtr = {0, 0};
  loop.numRows = loop.numCols = 1;
  loop.rowPtr = {0, 1};
  loop.colIdx = {0};
  std::vector<CsrGraph> graphs = {empty, moleculeGraph(300, 6, 1)};
  for (int i = 0; i < 40; ++i) {
    graphs.push_back(moleculeGraph(2 + i % 11, 4, 10 + i));
    if (i % 7 == 0)
      graphs.push_back(empty);
    if (i % 5 == 0)
      graphs.push_back(i % 10 ? single : loop);
  }
  graphs.push_back(moleculeGraph(40, 4, 99));
  graphs.push_back(moleculeGraph(3, 4, 98));
  graphs.push_back(empty);
  Expected<BatchedGraph> b = collate(graphs);
  BatchedGraph out = b ? b.take() : BatchedGraph{};
  out.graph.name = "ragged";
  return out;
}
