//===- Csr.cpp - Compressed sparse row graphs -----------------------------===//

#include "gnnc/graph/Csr.h"
#include "gnnc/graph/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

using namespace gnnc;
using namespace gnnc::graph;

Status CsrGraph::validate() const {
  auto err = [&](const std::string &what) {
    std::string prefix = name.empty() ? "invalid CSR" : name;
    return Status::error(prefix + ": " + what);
  };
  if (numRows < 0 || numCols < 0)
    return err("negative dimensions " + std::to_string(numRows) + "x" +
               std::to_string(numCols));
  if (static_cast<int64_t>(rowPtr.size()) != numRows + 1)
    return err(
        "rowPtr has " + std::to_string(rowPtr.size()) +
        " entries, expected numRows + 1 = " + std::to_string(numRows + 1));
  if (rowPtr[0] != 0)
    return err("rowPtr[0] is " + std::to_string(rowPtr[0]) + ", expected 0");
  for (int64_t r = 0; r < numRows; ++r)
    if (rowPtr[r + 1] < rowPtr[r])
      return err("rowPtr is not monotone: rowPtr[" + std::to_string(r) +
                 "] = " + std::to_string(rowPtr[r]) + " > rowPtr[" +
                 std::to_string(r + 1) +
                 "] = " + std::to_string(rowPtr[r + 1]));
  if (rowPtr[numRows] != nnz())
    return err("rowPtr[numRows] = " + std::to_string(rowPtr[numRows]) +
               " but colIdx has " + std::to_string(nnz()) + " entries");
  for (int64_t r = 0; r < numRows; ++r)
    for (int64_t e = rowPtr[r]; e < rowPtr[r + 1]; ++e)
      if (colIdx[e] < 0 || colIdx[e] >= numCols)
        return err("colIdx[" + std::to_string(e) + "] = " +
                   std::to_string(colIdx[e]) + " (row " + std::to_string(r) +
                   ") is out of range [0, " + std::to_string(numCols) + ")");
  if (!values.empty() && static_cast<int64_t>(values.size()) != nnz())
    return err("values has " + std::to_string(values.size()) +
               " entries, expected 0 or nnz = " + std::to_string(nnz()));
  return Status::ok();
}

bool CsrGraph::isSortedAndUnique() const {
  for (int64_t r = 0; r < numRows; ++r)
    for (int64_t e = rowPtr[r] + 1; e < rowPtr[r + 1]; ++e)
      if (colIdx[e - 1] >= colIdx[e])
        return false;
  return true;
}

/// `values` as i32, or an error naming the first of them (a `what`: "row
/// offset") that does not fit.
static Expected<std::vector<int32_t>>
narrowToI32(const std::vector<int64_t> &values, const char *what) {
  constexpr int64_t maxI32 = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] > maxI32)
      return Status::error("32-bit overflow: " + std::string(what) + " " +
                           std::to_string(values[i]) + " at position " +
                           std::to_string(i) + " does not fit i32");
    out[i] = static_cast<int32_t>(values[i]);
  }
  return out;
}

Expected<std::vector<int32_t>> CsrGraph::colIdx32() const {
  constexpr int64_t maxI32 = std::numeric_limits<int32_t>::max();
  if (numCols - 1 > maxI32)
    return Status::error("32-bit overflow: " + std::to_string(numCols) +
                         " columns do not fit i32 column indices");
  return narrowToI32(colIdx, "column index");
}

Expected<std::vector<int32_t>> CsrGraph::rowPtr32() const {
  constexpr int64_t maxI32 = std::numeric_limits<int32_t>::max();
  int64_t last = rowPtr.empty() ? 0 : rowPtr.back();
  if (last > maxI32 || nnz() > maxI32)
    return Status::error("32-bit overflow: nnz " +
                         std::to_string(std::max(last, nnz())) +
                         " does not fit i32 row offsets");
  return narrowToI32(rowPtr, "row offset");
}

std::vector<float> CsrGraph::valuesOrOnes() const {
  if (!values.empty())
    return values;
  return std::vector<float>(colIdx.size(), 1.0f);
}

CsrGraph gnnc::graph::transpose(const CsrGraph &g) {
  return transposeWithEdgeMap(g).graph;
}

TransposedGraph gnnc::graph::transposeWithEdgeMap(const CsrGraph &g) {
  TransposedGraph result;
  CsrGraph &t = result.graph;
  t.numRows = g.numCols;
  t.numCols = g.numRows;
  t.name = g.name.empty() ? std::string() : g.name + "^T";
  t.rowPtr.assign(t.numRows + 1, 0);
  for (int64_t c : g.colIdx)
    ++t.rowPtr[c + 1];
  for (int64_t r = 0; r < t.numRows; ++r)
    t.rowPtr[r + 1] += t.rowPtr[r];
  t.colIdx.resize(g.colIdx.size());
  result.edgeOf.resize(g.colIdx.size());
  if (g.hasValues())
    t.values.resize(g.values.size());
  std::vector<int64_t> next(t.rowPtr.begin(), t.rowPtr.end() - 1);
  // Visiting source rows in order keeps each result row sorted.
  for (int64_t r = 0; r < g.numRows; ++r) {
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
      int64_t pos = next[g.colIdx[e]]++;
      t.colIdx[pos] = r;
      result.edgeOf[pos] = e;
      if (g.hasValues())
        t.values[pos] = g.values[e];
    }
  }
  return result;
}

std::vector<float>
gnnc::graph::permuteEdgeData(const std::vector<float> &data,
                             const std::vector<int64_t> &edgeOf,
                             int64_t width) {
  std::vector<float> out(edgeOf.size() * static_cast<size_t>(width));
  for (size_t i = 0; i < edgeOf.size(); ++i)
    for (int64_t h = 0; h < width; ++h)
      out[i * width + h] = data[edgeOf[i] * width + h];
  return out;
}

Expected<CsrGraph> gnnc::graph::fromCoo(int64_t numRows, int64_t numCols,
                                        const std::vector<int64_t> &rows,
                                        const std::vector<int64_t> &cols,
                                        const std::vector<float> &vals,
                                        Duplicates duplicates) {
  if (numRows < 0 || numCols < 0)
    return Status::error("fromCoo: negative dimensions");
  if (rows.size() != cols.size())
    return Status::error("fromCoo: " + std::to_string(rows.size()) +
                         " row indices but " + std::to_string(cols.size()) +
                         " column indices");
  if (!vals.empty() && vals.size() != rows.size())
    return Status::error("fromCoo: " + std::to_string(vals.size()) +
                         " values for " + std::to_string(rows.size()) +
                         " entries");
  size_t n = rows.size();
  for (size_t i = 0; i < n; ++i) {
    if (rows[i] < 0 || rows[i] >= numRows)
      return Status::error("fromCoo: row index " + std::to_string(rows[i]) +
                           " at position " + std::to_string(i) +
                           " is out of range [0, " + std::to_string(numRows) +
                           ")");
    if (cols[i] < 0 || cols[i] >= numCols)
      return Status::error("fromCoo: column index " + std::to_string(cols[i]) +
                           " at position " + std::to_string(i) +
                           " is out of range [0, " + std::to_string(numCols) +
                           ")");
  }
  bool withValues = !vals.empty();
  // Counting sort by row (stable, so KeepFirst keeps input order), then sort
  // each row by column.
  std::vector<int64_t> rowPtr(numRows + 1, 0);
  for (int64_t r : rows)
    ++rowPtr[r + 1];
  for (int64_t r = 0; r < numRows; ++r)
    rowPtr[r + 1] += rowPtr[r];
  std::vector<int64_t> order(n);
  {
    std::vector<int64_t> next(rowPtr.begin(), rowPtr.end() - 1);
    for (size_t i = 0; i < n; ++i)
      order[next[rows[i]]++] = static_cast<int64_t>(i);
  }
  CsrGraph g;
  g.numRows = numRows;
  g.numCols = numCols;
  g.rowPtr.assign(numRows + 1, 0);
  g.colIdx.reserve(n);
  if (withValues)
    g.values.reserve(n);
  for (int64_t r = 0; r < numRows; ++r) {
    auto begin = order.begin() + rowPtr[r], end = order.begin() + rowPtr[r + 1];
    std::stable_sort(begin, end,
                     [&](int64_t x, int64_t y) { return cols[x] < cols[y]; });
    for (auto it = begin; it != end; ++it) {
      int64_t c = cols[*it];
      bool dup = it != begin && cols[*(it - 1)] == c;
      if (dup) {
        if (withValues && duplicates == Duplicates::Sum)
          g.values.back() += vals[*it];
        continue;
      }
      g.colIdx.push_back(c);
      if (withValues)
        g.values.push_back(vals[*it]);
    }
    g.rowPtr[r + 1] = g.nnz();
  }
  g.colIdx.shrink_to_fit();
  g.values.shrink_to_fit();
  return g;
}

Stats gnnc::graph::computeStats(const CsrGraph &g) {
  Stats s;
  s.numRows = g.numRows;
  s.numCols = g.numCols;
  s.nnz = g.nnz();
  if (g.numRows == 0)
    return s;
  s.minDegree = std::numeric_limits<int64_t>::max();
  double sumSq = 0;
  for (int64_t r = 0; r < g.numRows; ++r) {
    int64_t d = g.degree(r);
    s.minDegree = std::min(s.minDegree, d);
    s.maxDegree = std::max(s.maxDegree, d);
    s.emptyRows += d == 0;
    sumSq += static_cast<double>(d) * static_cast<double>(d);
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      s.selfLoops += g.colIdx[e] == r;
  }
  s.meanDegree = static_cast<double>(s.nnz) / static_cast<double>(g.numRows);
  double var =
      sumSq / static_cast<double>(g.numRows) - s.meanDegree * s.meanDegree;
  s.stddevDegree = std::sqrt(std::max(0.0, var));
  return s;
}

std::string gnnc::graph::formatStats(const Stats &s) {
  char buf[256];
  std::snprintf(
      buf, sizeof(buf),
      "%lldx%lld nnz=%lld deg min/mean/max = %lld/%.2f/%lld "
      "(stddev %.2f) empty=%lld selfloops=%lld",
      static_cast<long long>(s.numRows), static_cast<long long>(s.numCols),
      static_cast<long long>(s.nnz), static_cast<long long>(s.minDegree),
      s.meanDegree, static_cast<long long>(s.maxDegree), s.stddevDegree,
      static_cast<long long>(s.emptyRows), static_cast<long long>(s.selfLoops));
  return buf;
}

static std::vector<int64_t> randomPermutation(int64_t n, Rng &rng) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(p[i], p[rng.nextBelow(static_cast<uint64_t>(i) + 1)]);
  return p;
}

CsrGraph gnnc::graph::permute(const CsrGraph &g,
                              const std::vector<int64_t> &rowPerm,
                              const std::vector<int64_t> &colPerm) {
  CsrGraph p;
  p.numRows = g.numRows;
  p.numCols = g.numCols;
  p.name = g.name;
  p.rowPtr.assign(g.numRows + 1, 0);
  for (int64_t r = 0; r < g.numRows; ++r)
    p.rowPtr[rowPerm[r] + 1] = g.degree(r);
  for (int64_t r = 0; r < g.numRows; ++r)
    p.rowPtr[r + 1] += p.rowPtr[r];
  p.colIdx.resize(g.colIdx.size());
  if (g.hasValues())
    p.values.resize(g.values.size());
  std::vector<std::pair<int64_t, float>> row;
  for (int64_t r = 0; r < g.numRows; ++r) {
    row.clear();
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e)
      row.emplace_back(colPerm[g.colIdx[e]],
                       g.hasValues() ? g.values[e] : 1.0f);
    std::sort(row.begin(), row.end(),
              [](const auto &x, const auto &y) { return x.first < y.first; });
    int64_t pos = p.rowPtr[rowPerm[r]];
    for (const auto &[c, v] : row) {
      p.colIdx[pos] = c;
      if (g.hasValues())
        p.values[pos] = v;
      ++pos;
    }
  }
  return p;
}

CsrGraph gnnc::graph::permuteRandomly(const CsrGraph &g, uint64_t seed) {
  Rng rng(seed);
  std::vector<int64_t> rowPerm = randomPermutation(g.numRows, rng);
  std::vector<int64_t> colPerm =
      g.numRows == g.numCols ? rowPerm : randomPermutation(g.numCols, rng);
  CsrGraph p = permute(g, rowPerm, colPerm);
  if (!p.name.empty())
    p.name += " (permuted, seed " + std::to_string(seed) + ")";
  return p;
}
