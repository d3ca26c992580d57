//===- Analysis.h - Structural profile of a sparse graph --------*- C++ -*-===//
//
// One linear pass over a CSR graph that summarizes what matters for choosing
// and tuning a sparse kernel: the row-length distribution (moments, a log2
// histogram, how concentrated the non-zeros are), how local the column
// accesses are, an estimate of how well a cache reuses feature rows in row
// order, and a fingerprint that identifies the graph (for caches of tuning
// results keyed by input).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_ANALYSIS_H
#define GNNC_GRAPH_ANALYSIS_H

#include "gnnc/graph/Csr.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace gnnc::graph {

/// Parameters of analyzeGraph.
struct AnalysisOptions {
  /// Capacity, in feature rows, of the simulated cache of the reuse estimate
  /// (see estimateFeatureReuse). The default, 4096 rows of 512 bytes (128
  /// f32 features), is 2 MiB.
  int64_t reuseWindowRows = 4096;
  /// Bytes of one feature row (feature width times element size); only used
  /// to turn row counts into byte estimates.
  int64_t featureBytesPerRow = 512;
  /// Whether to run the reuse simulation. It is most of the cost of the
  /// analysis (R-MAT scale 21, 32M non-zeros: 0.54 s CPU with it, 0.09 s
  /// without).
  bool estimateReuse = true;
};

/// Result of the feature-row reuse estimate.
struct ReuseEstimate {
  /// Feature-row loads simulated (= nnz).
  int64_t loads = 0;
  /// Loads that found their row among the last `windowRows` distinct rows
  /// loaded.
  int64_t hits = 0;
  /// hits / loads (0 for an empty graph).
  double hitRate = 0;
};

/// Estimates how well a cache reuses feature rows when the rows of `g` are
/// processed in order and every non-zero (r, c) loads feature row c: the
/// fraction of loads whose row is among the last `windowRows` distinct rows
/// loaded (an exact LRU cache of `windowRows` whole rows; cold loads miss).
/// This is an estimate of L2 behaviour, not a model of it: a GPU processes
/// many rows at once, caches lines rather than rows, and is set-associative.
/// It is useful to compare orderings of the same graph. Linear in nnz.
ReuseEstimate estimateFeatureReuse(const CsrGraph &g, int64_t windowRows);

/// 64-bit fingerprint of the structure of `g`: numRows, numCols, rowPtr and
/// colIdx (not the values or the name). The same on every machine and run;
/// any change to the structure changes it with overwhelming probability.
uint64_t graphFingerprint(const CsrGraph &g);

/// The fingerprint as 16 lower-case hex digits.
std::string fingerprintToHex(uint64_t fingerprint);

/// The group sizes GraphProfile::neighbourGroups counts.
constexpr int64_t kProfileGroupSizes[] = {1, 4, 8, 16, 32, 64};

/// Structural summary of a graph; see analyzeGraph.
struct GraphProfile {
  int64_t numRows = 0;
  int64_t numCols = 0;
  int64_t nnz = 0;

  /// Row-length (degree) statistics over all rows, empty ones included.
  double meanDegree = 0;
  /// Population standard deviation.
  double stddevDegree = 0;
  int64_t minDegree = 0;
  int64_t maxDegree = 0;
  /// Third standardized moment E[(d - mean)^3] / stddev^3 (0 when stddev is
  /// 0). Power-law graphs have large positive skew.
  double skewDegree = 0;
  /// stddev / mean (0 when the mean is 0).
  double coefficientOfVariation = 0;
  int64_t emptyRows = 0;

  /// Row-length histogram in log2 buckets: entry 0 counts empty rows, entry
  /// k >= 1 counts rows with degree in [2^(k-1), 2^k). Has
  /// histogramBucketCount(maxDegree) entries.
  std::vector<int64_t> degreeHistogram;
  /// Neighbour groups (GNNAdvisor) when every row is cut into groups of at
  /// most G non-zeros, sum over rows of ceil(degree / G), for G in
  /// kProfileGroupSizes.
  std::map<int64_t, int64_t> neighbourGroups;
  /// Fraction of the non-zeros held by the ceil(1%) longest rows (at least
  /// one row); 0 for an empty graph.
  double top1PercentNnzFraction = 0;

  /// Mean over non-zeros of |col - row| / numCols (0 for random order on a
  /// banded matrix, about 1/3 for uniformly random columns).
  double meanEdgeSpan = 0;
  /// Mean over non-empty rows of (max col - min col) / numCols.
  double meanRowSpan = 0;
  /// Number of columns referenced by at least one non-zero.
  int64_t referencedColumns = 0;

  /// Parameters and result of the reuse estimate (estimateFeatureReuse);
  /// loads is 0 when the estimate was not run.
  int64_t reuseWindowRows = 0;
  int64_t featureBytesPerRow = 0;
  ReuseEstimate reuse;
  /// Feature bytes loaded from memory according to the estimate (misses
  /// times featureBytesPerRow) and the minimum possible (every referenced
  /// row once).
  double estimatedFeatureBytes = 0;
  double minimalFeatureBytes = 0;

  /// graphFingerprint(g) and its hex form.
  uint64_t fingerprint = 0;
  std::string fingerprintHex;
};

/// Number of degreeHistogram entries needed for degrees up to maxDegree.
int64_t histogramBucketCount(int64_t maxDegree);

/// Index of the histogram bucket that holds degree `degree`.
int64_t histogramBucket(int64_t degree);

/// Profiles `g` (which must satisfy g.validate()). Time and extra memory are
/// linear: O(numRows + numCols + nnz).
GraphProfile analyzeGraph(const CsrGraph &g,
                          const AnalysisOptions &options = {});

/// Human-readable multi-line report of a profile.
std::string formatProfile(const GraphProfile &profile);

/// The profile as one JSON object (keys as the field names; the histogram as
/// a list of {"minDegree", "maxDegree", "rows"} objects).
std::string profileToJson(const GraphProfile &profile);

/// The profiles of one graph under the analysis options tuning asks for,
/// kept across tuning runs. A profile is a pass over every edge (about
/// 0.5 s at 31M edges, most of it the reuse simulation) and every op
/// signature tuned on a graph needs one (also to look up the tuning
/// database), while the options differ only by feature-row size.
class ProfileCache {
public:
  /// The profile of `g` under `options`, analysed on the first request.
  /// Profiles of another graph (a different object) are dropped first.
  const GraphProfile &get(const CsrGraph &g, const AnalysisOptions &options);
  /// How many analyses the cache holds.
  size_t size() const { return profiles_.size(); }

private:
  const CsrGraph *graph_ = nullptr;
  std::map<std::tuple<int64_t, int64_t, bool>, GraphProfile> profiles_;
};

} // namespace gnnc::graph

#endif // GNNC_GRAPH_ANALYSIS_H
