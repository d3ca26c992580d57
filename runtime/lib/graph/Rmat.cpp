//===- Rmat.cpp - Synthetic graph generators ------------------------------===//

#include "gnnc/graph/Rmat.h"
#include "gnnc/graph/Parallel.h"
#include "gnnc/graph/Random.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <memory>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// Splits [0, n) into numThreads near-equal ranges and returns range t.
std::pair<int64_t, int64_t> splitRange(int64_t n, int t, int numThreads) {
  return {n * t / numThreads, n * (t + 1) / numThreads};
}

/// Runs fn(threadIndex, numThreads) on numThreads threads.
template <typename Fn> void parallelRun(int numThreads, Fn fn) {
  parallelForEach(numThreads, numThreads,
                  [&](int64_t t) { fn(static_cast<int>(t), numThreads); });
}

/// Sorts and deduplicates each row of a bucketed column array (optionally
/// dropping the diagonal), then compacts it into the CSR of `g`. The order
/// of the columns within a bucket does not matter.
void finishRows(CsrGraph &g, const std::vector<int64_t> &bucketPtr,
                uint32_t *cols, bool removeSelfLoops, int numThreads) {
  int64_t numRows = g.numRows;
  // R-MAT piles edges onto the first rows: cut by work, not by row count.
  std::vector<int64_t> bounds = splitRowsByWork(
      bucketPtr.data(), numRows, static_cast<int64_t>(numThreads) * 16);
  int64_t pieces = static_cast<int64_t>(bounds.size()) - 1;
  std::vector<int64_t> degree(numRows, 0);
  parallelForEach(pieces, numThreads, [&](int64_t p) {
    for (int64_t r = bounds[p]; r < bounds[p + 1]; ++r) {
      uint32_t *begin = cols + bucketPtr[r];
      uint32_t *end = cols + bucketPtr[r + 1];
      std::sort(begin, end);
      end = std::unique(begin, end);
      if (removeSelfLoops) {
        uint32_t *diag = std::lower_bound(begin, end, static_cast<uint32_t>(r));
        if (diag != end && *diag == r) {
          std::move(diag + 1, end, diag);
          --end;
        }
      }
      degree[r] = end - begin;
    }
  });
  g.rowPtr.assign(numRows + 1, 0);
  for (int64_t r = 0; r < numRows; ++r)
    g.rowPtr[r + 1] = g.rowPtr[r] + degree[r];
  g.colIdx.resize(g.rowPtr[numRows]);
  parallelForEach(pieces, numThreads, [&](int64_t p) {
    for (int64_t r = bounds[p]; r < bounds[p + 1]; ++r) {
      const uint32_t *src = cols + bucketPtr[r];
      std::copy(src, src + degree[r], g.colIdx.begin() + g.rowPtr[r]);
    }
  });
}

} // namespace

CsrGraph gnnc::graph::generateRmat(int scale, int edgeFactor, uint64_t seed,
                                   double a, double b, double c,
                                   bool symmetrize, bool removeSelfLoops) {
  assert(scale >= 0 && scale <= 31 && edgeFactor >= 0 && "bad R-MAT size");
  CsrGraph g;
  if (scale < 0 || scale > 31 || edgeFactor < 0)
    return g;
  char name[160];
  std::snprintf(name, sizeof(name),
                "rmat-s%d-ef%d-seed%llu(a=%.3g,b=%.3g,c=%.3g%s)", scale,
                edgeFactor, static_cast<unsigned long long>(seed), a, b, c,
                symmetrize ? ",sym" : "");
  g.name = name;
  int64_t numNodes = int64_t(1) << scale;
  g.numRows = g.numCols = numNodes;
  uint64_t numEdges = static_cast<uint64_t>(edgeFactor) << scale;
  int numThreads = hostThreads();

  // Quadrant thresholds on 21-bit uniform draws (three draws per 64 bits).
  constexpr int kBits = 21;
  constexpr double kScale = double(1 << kBits);
  auto threshold = [&](double p) {
    return static_cast<uint32_t>(std::clamp(p, 0.0, 1.0) * kScale);
  };
  uint32_t tA = threshold(a), tAB = threshold(a + b),
           tABC = threshold(a + b + c);

  // 1. Sample edges as packed (row << scale | col) keys, in fixed blocks with
  // their own random streams so the result ignores the thread count. The
  // array is left uninitialized: its pages are first touched by the threads
  // that fill them.
  std::unique_ptr<uint64_t[]> keys(new uint64_t[numEdges]);
  constexpr uint64_t kBlock = uint64_t(1) << 18;
  const int64_t numBlocks =
      static_cast<int64_t>((numEdges + kBlock - 1) / kBlock);
  parallelForEach(numBlocks, numThreads, [&](int64_t blockIndex) {
    uint64_t blk = static_cast<uint64_t>(blockIndex);
    Rng rng(deriveSeed(seed, blk));
    uint64_t end = std::min(numEdges, (blk + 1) * kBlock);
    for (uint64_t e = blk * kBlock; e < end; ++e) {
      uint64_t row = 0, col = 0;
      for (int level = scale - 1; level >= 0;) {
        uint64_t bits = rng.next();
        for (int k = 0; k < 3 && level >= 0; ++k, --level) {
          uint32_t u = static_cast<uint32_t>(bits & ((1u << kBits) - 1));
          bits >>= kBits;
          // Branch-free quadrant choice: row bit in the bottom half
          // (u >= a + b); column bit in the right half ([a, a + b) or
          // u >= a + b + c).
          uint64_t ab = u >= tAB;
          uint64_t colBit = uint64_t(u >= tA) ^ ab ^ uint64_t(u >= tABC);
          row |= ab << level;
          col |= colBit << level;
        }
      }
      keys[e] = (row << scale) | col;
    }
  });

  // 2. Bucket columns by row (both directions when symmetrizing): counts,
  // then a slot within each bucket for every entry. On several threads both
  // are atomic increments, so the order within a bucket depends on the
  // timing, but step 3 sorts every bucket, so the graph does not.
  uint64_t colMask = (uint64_t(1) << scale) - 1;
  std::vector<int64_t> bucketPtr(numNodes + 1, 0);
  std::unique_ptr<std::atomic<int64_t>[]> slot(
      new std::atomic<int64_t>[numNodes]());
  const bool shared = numThreads > 1 && numBlocks > 1;
  auto increment = [&](uint64_t node) {
    std::atomic<int64_t> &s = slot[node];
    if (shared)
      return s.fetch_add(1, std::memory_order_relaxed);
    int64_t old = s.load(std::memory_order_relaxed);
    s.store(old + 1, std::memory_order_relaxed);
    return old;
  };
  parallelForEach(numBlocks, numThreads, [&](int64_t blk) {
    uint64_t end = std::min(numEdges, (blk + 1) * kBlock);
    for (uint64_t e = blk * kBlock; e < end; ++e) {
      increment(keys[e] >> scale);
      if (symmetrize)
        increment(keys[e] & colMask);
    }
  });
  for (int64_t r = 0; r < numNodes; ++r) {
    int64_t count = slot[r].load(std::memory_order_relaxed);
    bucketPtr[r + 1] = bucketPtr[r] + count;
    slot[r].store(bucketPtr[r], std::memory_order_relaxed);
  }
  std::unique_ptr<uint32_t[]> cols(new uint32_t[bucketPtr[numNodes]]);
  parallelForEach(numBlocks, numThreads, [&](int64_t blk) {
    uint64_t end = std::min(numEdges, (blk + 1) * kBlock);
    for (uint64_t e = blk * kBlock; e < end; ++e) {
      uint64_t row = keys[e] >> scale, col = keys[e] & colMask;
      cols[increment(row)] = static_cast<uint32_t>(col);
      if (symmetrize)
        cols[increment(col)] = static_cast<uint32_t>(row);
    }
  });
  keys.reset();
  slot.reset();

  // 3. Sort, deduplicate and compact each row.
  finishRows(g, bucketPtr, cols.get(), removeSelfLoops, numThreads);
  return g;
}

CsrGraph gnnc::graph::generateUniformRandom(int64_t numRows, int64_t numCols,
                                            double avgDegree, uint64_t seed) {
  CsrGraph g;
  g.numRows = std::max<int64_t>(numRows, 0);
  g.numCols = std::max<int64_t>(numCols, 0);
  char name[160];
  std::snprintf(name, sizeof(name), "uniform-%lldx%lld-deg%.3g-seed%llu",
                static_cast<long long>(g.numRows),
                static_cast<long long>(g.numCols), avgDegree,
                static_cast<unsigned long long>(seed));
  g.name = name;
  avgDegree = std::max(0.0, avgDegree);
  double whole = std::floor(avgDegree), frac = avgDegree - whole;
  std::vector<std::vector<int64_t>> rows(g.numRows);
  int numThreads = g.numRows * avgDegree > 1e5 ? hostThreads() : 1;
  parallelRun(numThreads, [&](int t, int nt) {
    auto [lo, hi] = splitRange(g.numRows, t, nt);
    for (int64_t r = lo; r < hi; ++r) {
      Rng rng(deriveSeed(seed, static_cast<uint64_t>(r)));
      int64_t d = static_cast<int64_t>(whole) + (rng.nextDouble() < frac);
      d = std::min(d, g.numCols);
      std::vector<int64_t> &row = rows[r];
      if (d == 0)
        continue;
      if (d * 2 > g.numCols) {
        // Selection sampling over all columns.
        int64_t needed = d;
        for (int64_t c = 0; c < g.numCols && needed > 0; ++c) {
          if (static_cast<int64_t>(rng.nextBelow(g.numCols - c)) < needed) {
            row.push_back(c);
            --needed;
          }
        }
        continue;
      }
      while (static_cast<int64_t>(row.size()) < d) {
        while (static_cast<int64_t>(row.size()) < d)
          row.push_back(static_cast<int64_t>(rng.nextBelow(g.numCols)));
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
      }
    }
  });
  g.rowPtr.assign(g.numRows + 1, 0);
  for (int64_t r = 0; r < g.numRows; ++r)
    g.rowPtr[r + 1] = g.rowPtr[r] + static_cast<int64_t>(rows[r].size());
  g.colIdx.reserve(g.rowPtr.back());
  for (std::vector<int64_t> &row : rows) {
    g.colIdx.insert(g.colIdx.end(), row.begin(), row.end());
    std::vector<int64_t>().swap(row);
  }
  return g;
}

CsrGraph gnnc::graph::makeRaggedTestGraph(uint64_t seed, int64_t numRows,
                                          int64_t heavyDegree,
                                          bool withValues) {
  CsrGraph g;
  numRows = std::max<int64_t>(numRows, 1);
  heavyDegree = std::max<int64_t>(heavyDegree, 0);
  g.numRows = numRows;
  g.numCols = std::max(numRows, heavyDegree);
  g.name = "ragged-" + std::to_string(numRows) + "-heavy" +
           std::to_string(heavyDegree) + "-seed" + std::to_string(seed);
  Rng rng(seed);
  int64_t heavyRow = numRows / 2;
  g.rowPtr.assign(numRows + 1, 0);
  std::vector<int64_t> row;
  for (int64_t r = 0; r < numRows; ++r) {
    int64_t d;
    if (r == heavyRow)
      d = heavyDegree;
    else if (r == 0 || r == numRows - 1 || r % 7 == 3)
      d = 0;
    else if (r % 7 == 5)
      d = 1;
    else if (r % 997 == 11)
      d = 200 + static_cast<int64_t>(rng.nextBelow(800));
    else
      d = 2 + static_cast<int64_t>(rng.nextBelow(63));
    d = std::min(d, g.numCols);
    row.clear();
    if (d * 2 > g.numCols) {
      int64_t needed = d;
      for (int64_t c = 0; c < g.numCols && needed > 0; ++c)
        if (static_cast<int64_t>(rng.nextBelow(g.numCols - c)) < needed) {
          row.push_back(c);
          --needed;
        }
    } else {
      while (static_cast<int64_t>(row.size()) < d) {
        while (static_cast<int64_t>(row.size()) < d)
          row.push_back(static_cast<int64_t>(rng.nextBelow(g.numCols)));
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
      }
    }
    g.colIdx.insert(g.colIdx.end(), row.begin(), row.end());
    g.rowPtr[r + 1] = g.nnz();
  }
  if (withValues) {
    g.values.resize(g.colIdx.size());
    for (float &v : g.values)
      v = static_cast<float>(rng.nextDouble() * 2.0 - 1.0);
  }
  return g;
}
