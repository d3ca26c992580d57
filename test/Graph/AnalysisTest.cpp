//===- AnalysisTest.cpp - Graph profiles ----------------------------------===//

#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Rmat.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

/// Builds a square graph from per-row column lists.
CsrGraph fromRows(const std::vector<std::vector<int64_t>> &rows,
                  int64_t numCols = -1) {
  CsrGraph g;
  g.numRows = static_cast<int64_t>(rows.size());
  g.numCols = numCols >= 0 ? numCols : g.numRows;
  g.rowPtr.push_back(0);
  for (const auto &row : rows) {
    g.colIdx.insert(g.colIdx.end(), row.begin(), row.end());
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
  return g;
}

/// Star: node 0 linked both ways with nodes 1..leaves.
CsrGraph star(int64_t leaves) {
  std::vector<std::vector<int64_t>> rows(leaves + 1);
  for (int64_t v = 1; v <= leaves; ++v) {
    rows[0].push_back(v);
    rows[v].push_back(0);
  }
  return fromRows(rows);
}

/// Path 0 - 1 - ... - (n-1), both directions.
CsrGraph path(int64_t n) {
  std::vector<std::vector<int64_t>> rows(n);
  for (int64_t v = 0; v < n; ++v) {
    if (v > 0)
      rows[v].push_back(v - 1);
    if (v + 1 < n)
      rows[v].push_back(v + 1);
  }
  return fromRows(rows);
}

/// Skew computed directly from the definition.
double skewOf(const std::vector<double> &d) {
  double mean = 0;
  for (double x : d)
    mean += x;
  mean /= d.size();
  double m2 = 0, m3 = 0;
  for (double x : d) {
    m2 += (x - mean) * (x - mean);
    m3 += (x - mean) * (x - mean) * (x - mean);
  }
  m2 /= d.size();
  m3 /= d.size();
  return m3 / std::pow(m2, 1.5);
}

TEST(AnalysisTest, StarProfile) {
  GraphProfile p = analyzeGraph(star(100));
  EXPECT_EQ(p.numRows, 101);
  EXPECT_EQ(p.numCols, 101);
  EXPECT_EQ(p.nnz, 200);
  EXPECT_EQ(p.minDegree, 1);
  EXPECT_EQ(p.maxDegree, 100);
  EXPECT_EQ(p.emptyRows, 0);
  EXPECT_DOUBLE_EQ(p.meanDegree, 200.0 / 101);
  std::vector<double> degrees(101, 1.0);
  degrees[0] = 100;
  double mean = 200.0 / 101, var = 0;
  for (double d : degrees)
    var += (d - mean) * (d - mean);
  var /= 101;
  EXPECT_NEAR(p.stddevDegree, std::sqrt(var), 1e-12);
  EXPECT_NEAR(p.coefficientOfVariation, std::sqrt(var) / mean, 1e-12);
  EXPECT_NEAR(p.skewDegree, skewOf(degrees), 1e-9);
  EXPECT_GT(p.skewDegree, 5);
  // Buckets: 0 | 1 | 2-3 | 4-7 | 8-15 | 16-31 | 32-63 | 64-127.
  ASSERT_EQ(p.degreeHistogram.size(), 8u);
  EXPECT_EQ(p.degreeHistogram[0], 0);
  EXPECT_EQ(p.degreeHistogram[1], 100);
  EXPECT_EQ(p.degreeHistogram[7], 1);
  // ceil(1% of 101) = 2 rows: the hub and one leaf.
  EXPECT_DOUBLE_EQ(p.top1PercentNnzFraction, 101.0 / 200);
  EXPECT_EQ(p.referencedColumns, 101);
}

TEST(AnalysisTest, PathProfile) {
  GraphProfile p = analyzeGraph(path(10));
  EXPECT_EQ(p.nnz, 18);
  EXPECT_EQ(p.minDegree, 1);
  EXPECT_EQ(p.maxDegree, 2);
  EXPECT_DOUBLE_EQ(p.meanDegree, 1.8);
  EXPECT_NEAR(p.skewDegree, skewOf({1, 2, 2, 2, 2, 2, 2, 2, 2, 1}), 1e-9);
  EXPECT_LT(p.skewDegree, 0);
  // Every edge spans 1 of 10 columns.
  EXPECT_DOUBLE_EQ(p.meanEdgeSpan, 0.1);
  // Inner rows span 2 columns, the end rows 0.
  EXPECT_DOUBLE_EQ(p.meanRowSpan, (8 * 2.0) / 10 / 10);
  ASSERT_EQ(p.degreeHistogram.size(), 3u);
  EXPECT_EQ(p.degreeHistogram[1], 2);
  EXPECT_EQ(p.degreeHistogram[2], 8);
}

TEST(AnalysisTest, EmptyRowsAndEmptyGraphs) {
  CsrGraph g = fromRows({{}, {0, 1, 2}, {}, {}}, 3);
  GraphProfile p = analyzeGraph(g);
  EXPECT_EQ(p.emptyRows, 3);
  EXPECT_EQ(p.minDegree, 0);
  EXPECT_EQ(p.maxDegree, 3);
  EXPECT_DOUBLE_EQ(p.meanDegree, 0.75);
  EXPECT_NEAR(p.skewDegree, skewOf({0, 3, 0, 0}), 1e-9);
  ASSERT_EQ(p.degreeHistogram.size(), 3u);
  EXPECT_EQ(p.degreeHistogram[0], 3);
  EXPECT_EQ(p.degreeHistogram[2], 1);
  EXPECT_DOUBLE_EQ(p.meanRowSpan, 2.0 / 3);
  EXPECT_DOUBLE_EQ(p.top1PercentNnzFraction, 1.0);

  // All rows empty.
  GraphProfile none = analyzeGraph(fromRows({{}, {}}));
  EXPECT_EQ(none.nnz, 0);
  EXPECT_EQ(none.emptyRows, 2);
  EXPECT_EQ(none.skewDegree, 0);
  EXPECT_EQ(none.coefficientOfVariation, 0);
  EXPECT_EQ(none.meanEdgeSpan, 0);
  EXPECT_EQ(none.reuse.hitRate, 0);

  // No rows at all.
  CsrGraph empty;
  empty.rowPtr = {0};
  GraphProfile zero = analyzeGraph(empty);
  EXPECT_EQ(zero.numRows, 0);
  EXPECT_EQ(zero.degreeHistogram.size(), 1u);
  EXPECT_EQ(zero.fingerprintHex.size(), 16u);
}

TEST(AnalysisTest, ConstantDegreeHasNoSkew) {
  GraphProfile p = analyzeGraph(fromRows({{1}, {2}, {0}}));
  EXPECT_EQ(p.stddevDegree, 0);
  EXPECT_EQ(p.skewDegree, 0);
  EXPECT_EQ(p.coefficientOfVariation, 0);
}

TEST(AnalysisTest, HistogramBuckets) {
  EXPECT_EQ(histogramBucket(0), 0);
  EXPECT_EQ(histogramBucket(1), 1);
  EXPECT_EQ(histogramBucket(2), 2);
  EXPECT_EQ(histogramBucket(3), 2);
  EXPECT_EQ(histogramBucket(4), 3);
  EXPECT_EQ(histogramBucket(1023), 10);
  EXPECT_EQ(histogramBucket(1024), 11);
  EXPECT_EQ(histogramBucketCount(0), 1);
  EXPECT_EQ(histogramBucketCount(1024), 12);

  CsrGraph g = generateUniformRandom(500, 800, 20.0, 3);
  GraphProfile p = analyzeGraph(g);
  int64_t rows = 0;
  for (size_t k = 0; k < p.degreeHistogram.size(); ++k) {
    rows += p.degreeHistogram[k];
    int64_t expected = 0;
    for (int64_t r = 0; r < g.numRows; ++r)
      expected += histogramBucket(g.degree(r)) == static_cast<int64_t>(k);
    EXPECT_EQ(p.degreeHistogram[k], expected) << "bucket " << k;
  }
  EXPECT_EQ(rows, g.numRows);
}

TEST(AnalysisTest, ReuseEstimate) {
  // Every row reads column 0: all loads but the first hit.
  CsrGraph same = fromRows({{0}, {0}, {0}, {0}});
  ReuseEstimate r = estimateFeatureReuse(same, 1);
  EXPECT_EQ(r.loads, 4);
  EXPECT_EQ(r.hits, 3);
  EXPECT_DOUBLE_EQ(r.hitRate, 0.75);

  // Alternating columns 0, 1, 0, 1, 0, 1: a window of one row never hits, a
  // window of two misses only the two cold loads.
  CsrGraph alternating = fromRows({{0, 1}, {0, 1}, {0, 1}});
  EXPECT_EQ(estimateFeatureReuse(alternating, 1).hits, 0);
  EXPECT_EQ(estimateFeatureReuse(alternating, 2).hits, 4);

  // Loads 0 1 2 0 3 1 2. Window 3: 0 hits, 3 evicts 1, 1 evicts 2, 2 evicts
  // 0: one hit. Window 4: 0, 1 and 2 hit the second time.
  CsrGraph lru = fromRows({{0, 1, 2}, {0, 3}, {1, 2}, {}}, 4);
  EXPECT_EQ(estimateFeatureReuse(lru, 3).hits, 1);
  EXPECT_EQ(estimateFeatureReuse(lru, 4).hits, 3);

  // Through analyzeGraph, with byte estimates.
  AnalysisOptions options;
  options.reuseWindowRows = 2;
  options.featureBytesPerRow = 64;
  GraphProfile p = analyzeGraph(alternating, options);
  EXPECT_EQ(p.reuse.hits, 4);
  EXPECT_DOUBLE_EQ(p.estimatedFeatureBytes, 2 * 64.0);
  EXPECT_DOUBLE_EQ(p.minimalFeatureBytes, 2 * 64.0);
  options.estimateReuse = false;
  EXPECT_EQ(analyzeGraph(alternating, options).reuse.loads, 0);
}

TEST(AnalysisTest, Fingerprint) {
  CsrGraph g = generateUniformRandom(300, 300, 6.0, 11);
  CsrGraph copy = g;
  copy.values.assign(copy.nnz(), 2.0f); // Values do not count.
  copy.name = "other";
  EXPECT_EQ(graphFingerprint(g), graphFingerprint(copy));
  EXPECT_EQ(analyzeGraph(g).fingerprintHex, analyzeGraph(copy).fingerprintHex);

  CsrGraph moved = g;
  moved.colIdx[moved.nnz() / 2] =
      (moved.colIdx[moved.nnz() / 2] + 1) % moved.numCols;
  EXPECT_NE(graphFingerprint(g), graphFingerprint(moved));

  CsrGraph wider = g;
  wider.numCols += 1;
  EXPECT_NE(graphFingerprint(g), graphFingerprint(wider));

  // Same entries, one moved to the next row.
  CsrGraph shifted = g;
  shifted.rowPtr[1] += 1;
  EXPECT_NE(graphFingerprint(g), graphFingerprint(shifted));

  // The value is fixed across machines and runs.
  CsrGraph small = path(5);
  EXPECT_EQ(fingerprintToHex(graphFingerprint(small)), "052590dfa638a0a6");
  EXPECT_EQ(fingerprintToHex(0x12ab), "00000000000012ab");
}

TEST(AnalysisTest, FormatAndJson) {
  GraphProfile p = analyzeGraph(star(100));
  std::string text = formatProfile(p);
  EXPECT_NE(text.find("graph 101 x 101, nnz 200"), std::string::npos) << text;
  EXPECT_NE(text.find(p.fingerprintHex), std::string::npos) << text;
  EXPECT_NE(text.find("hit rate"), std::string::npos) << text;

  std::string json = profileToJson(p);
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  int braces = 0, brackets = 0, quotes = 0;
  for (char c : json) {
    braces += c == '{' ? 1 : c == '}' ? -1 : 0;
    brackets += c == '[' ? 1 : c == ']' ? -1 : 0;
    quotes += c == '"';
    EXPECT_GE(braces, 0);
    EXPECT_GE(brackets, 0);
  }
  EXPECT_EQ(braces, 0);
  EXPECT_EQ(brackets, 0);
  EXPECT_EQ(quotes % 2, 0);
  EXPECT_NE(json.find("\"nnz\": 200,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"maxDegree\": 100,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fingerprint\": \"" + p.fingerprintHex + "\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"minDegree\": 64, \"maxDegree\": 127, \"rows\": 1}"),
            std::string::npos)
      << json;
  // A number field parses back.
  size_t at = json.find("\"meanDegree\": ");
  ASSERT_NE(at, std::string::npos);
  double mean = std::strtod(json.c_str() + at + 14, nullptr);
  EXPECT_NEAR(mean, 200.0 / 101, 1e-9);
  EXPECT_EQ(json.find("nan"), std::string::npos);
  EXPECT_EQ(json.find("inf"), std::string::npos);
}

TEST(AnalysisTest, PowerLawGraphIsSkewed) {
  CsrGraph g = generateRmat(14, 8, 5);
  GraphProfile p = analyzeGraph(g);
  EXPECT_GT(p.skewDegree, 2);
  EXPECT_GT(p.coefficientOfVariation, 1);
  EXPECT_GT(p.top1PercentNnzFraction, 0.1);
  EXPECT_GT(p.emptyRows, 0);
}

// A graph's profiles are analysed once per option set and kept; another
// graph object starts the cache over.
TEST(AnalysisTest, ProfileCacheKeepsOneAnalysisPerOptions) {
  CsrGraph g = generateRmat(12, 8, 3);
  ProfileCache cache;
  AnalysisOptions narrow, wide;
  narrow.featureBytesPerRow = 128;
  narrow.reuseWindowRows = 1 << 14;
  wide.featureBytesPerRow = 512;
  wide.reuseWindowRows = 1 << 12;
  const GraphProfile &first = cache.get(g, narrow);
  EXPECT_EQ(cache.size(), 1u);
  // The same options: the same analysis, not a new one.
  EXPECT_EQ(&cache.get(g, narrow), &first);
  EXPECT_EQ(cache.size(), 1u);
  const GraphProfile &other = cache.get(g, wide);
  EXPECT_EQ(cache.size(), 2u);
  // Each is what analyzeGraph gives for its options.
  GraphProfile direct = analyzeGraph(g, wide);
  EXPECT_EQ(other.featureBytesPerRow, 512);
  EXPECT_EQ(other.reuse.hits, direct.reuse.hits);
  EXPECT_EQ(other.fingerprintHex, direct.fingerprintHex);
  EXPECT_EQ(cache.get(g, narrow).reuse.hits,
            analyzeGraph(g, narrow).reuse.hits);
  // Another graph (a copy is another object) drops the entries first.
  CsrGraph h = generateRmat(10, 4, 9);
  EXPECT_EQ(cache.get(h, narrow).nnz, h.nnz());
  EXPECT_EQ(cache.size(), 1u);
}

double cpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

/// Loose check (generous bound, any machine): a 4M-edge graph in well under
/// 20 s of CPU time.
TEST(AnalysisTest, LinearTimeOnMediumGraph) {
  CsrGraph g = generateRmat(18, 16, 7);
  double start = cpuSeconds();
  GraphProfile p = analyzeGraph(g);
  double seconds = cpuSeconds() - start;
  EXPECT_EQ(p.nnz, g.nnz());
  EXPECT_LT(seconds, 20.0);
}

/// The timing reported in the docs: R-MAT scale 21 (~32M edges). Run with
/// --gtest_also_run_disabled_tests.
TEST(AnalysisTest, DISABLED_TimeRmat21) {
  CsrGraph g = generateRmat(21, 16, 1);
  double cpu = cpuSeconds();
  auto wall = std::chrono::steady_clock::now();
  GraphProfile p = analyzeGraph(g);
  double cpuTime = cpuSeconds() - cpu;
  double wallTime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall)
          .count();
  AnalysisOptions noReuse;
  noReuse.estimateReuse = false;
  cpu = cpuSeconds();
  GraphProfile q = analyzeGraph(g, noReuse);
  double cpuNoReuse = cpuSeconds() - cpu;
  std::printf("%s", formatProfile(p).c_str());
  std::printf("analyzeGraph: %.3f s CPU, %.3f s wall (%.3f s CPU without the "
              "reuse estimate)\n",
              cpuTime, wallTime, cpuNoReuse);
  EXPECT_EQ(q.fingerprint, p.fingerprint);
  EXPECT_LT(cpuTime, 20.0);
}

} // namespace
