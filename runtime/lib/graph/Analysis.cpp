//===- Analysis.cpp - Structural profile of a sparse graph ----------------===//

#include "gnnc/graph/Analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <sstream>

using namespace gnnc;
using namespace gnnc::graph;

//===----------------------------------------------------------------------===//
// Reuse estimate
//===----------------------------------------------------------------------===//

namespace {

/// An exact LRU set of at most `capacity` keys in [0, numKeys), kept as an
/// intrusive circular doubly linked list over arrays indexed by key (key
/// numKeys is the sentinel), so that every access is O(1) without hashing.
template <typename Index> class LruRows {
public:
  LruRows(int64_t numKeys, int64_t capacity)
      : sentinel(static_cast<Index>(numKeys)), capacity(capacity),
        prev(numKeys + 1), next(numKeys + 1), present(numKeys, 0) {
    prev[sentinel] = next[sentinel] = sentinel;
  }

  /// Records an access to `key`; returns whether it was present.
  bool access(Index key) {
    if (present[key]) {
      if (next[sentinel] != key) {
        unlink(key);
        pushFront(key);
      }
      return true;
    }
    if (size == capacity) {
      Index victim = prev[sentinel];
      unlink(victim);
      present[victim] = 0;
      --size;
    }
    pushFront(key);
    present[key] = 1;
    ++size;
    return false;
  }

private:
  void unlink(Index key) {
    Index p = prev[key], n = next[key];
    next[p] = n;
    prev[n] = p;
  }
  void pushFront(Index key) {
    Index first = next[sentinel];
    next[key] = first;
    prev[key] = sentinel;
    prev[first] = key;
    next[sentinel] = key;
  }

  Index sentinel;
  int64_t capacity;
  int64_t size = 0;
  std::vector<Index> prev;
  std::vector<Index> next;
  std::vector<uint8_t> present;
};

template <typename Index>
int64_t countReuseHits(const CsrGraph &g, int64_t windowRows) {
  LruRows<Index> lru(g.numCols, windowRows);
  int64_t hits = 0;
  for (int64_t c : g.colIdx)
    hits += lru.access(static_cast<Index>(c));
  return hits;
}

} // namespace

ReuseEstimate gnnc::graph::estimateFeatureReuse(const CsrGraph &g,
                                                int64_t windowRows) {
  ReuseEstimate estimate;
  estimate.loads = g.nnz();
  if (estimate.loads == 0 || windowRows <= 0)
    return estimate;
  if (g.numCols < static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    estimate.hits = countReuseHits<uint32_t>(g, windowRows);
  else
    estimate.hits = countReuseHits<uint64_t>(g, windowRows);
  estimate.hitRate =
      static_cast<double>(estimate.hits) / static_cast<double>(estimate.loads);
  return estimate;
}

//===----------------------------------------------------------------------===//
// Fingerprint
//===----------------------------------------------------------------------===//

namespace {

constexpr uint64_t kMulA = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kMulB = 0xd6e8feb86659fd93ull;
constexpr uint64_t kMulC = 0xa0761d6478bd642full;

inline uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/// Full-avalanche finalizer (every input bit affects every output bit).
inline uint64_t avalanche(uint64_t x) {
  x ^= x >> 32;
  x *= kMulB;
  x ^= x >> 29;
  x *= kMulC;
  x ^= x >> 32;
  return x;
}

/// Folds one word into an accumulator lane.
inline uint64_t absorb(uint64_t lane, uint64_t word) {
  lane += word * kMulC;
  lane = rotl64(lane, 29);
  return lane * kMulA;
}

/// Hashes an array of 64-bit words with four independent lanes (so the loop
/// is not one long dependency chain), then merges the lanes and the length.
/// Words are hashed as integers, so the result does not depend on byte
/// order.
uint64_t hashWords(const int64_t *data, size_t count, uint64_t seed) {
  uint64_t lanes[4] = {seed + kMulA, seed ^ kMulB, seed - kMulC,
                       rotl64(seed, 17) + kMulB};
  size_t i = 0;
  for (; i + 4 <= count; i += 4)
    for (int j = 0; j < 4; ++j)
      lanes[j] = absorb(lanes[j], static_cast<uint64_t>(data[i + j]));
  for (int j = 0; i < count; ++i, ++j)
    lanes[j] = absorb(lanes[j], static_cast<uint64_t>(data[i]));
  uint64_t h = rotl64(lanes[0], 1) + rotl64(lanes[1], 7) +
               rotl64(lanes[2], 13) + rotl64(lanes[3], 19);
  for (uint64_t lane : lanes)
    h = (h ^ avalanche(lane)) * kMulA + kMulC;
  return avalanche(h ^ static_cast<uint64_t>(count));
}

} // namespace

uint64_t gnnc::graph::graphFingerprint(const CsrGraph &g) {
  int64_t header[3] = {g.numRows, g.numCols, g.nnz()};
  uint64_t h = hashWords(header, 3, 0x676e6e632d677261ull); // "gnnc-gra"
  h = hashWords(g.rowPtr.data(), g.rowPtr.size(), h);
  h = hashWords(g.colIdx.data(), g.colIdx.size(), h);
  return h;
}

std::string gnnc::graph::fingerprintToHex(uint64_t fingerprint) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(fingerprint));
  return buf;
}

//===----------------------------------------------------------------------===//
// Profile
//===----------------------------------------------------------------------===//

int64_t gnnc::graph::histogramBucket(int64_t degree) {
  if (degree <= 0)
    return 0;
  return 64 - __builtin_clzll(static_cast<unsigned long long>(degree));
}

int64_t gnnc::graph::histogramBucketCount(int64_t maxDegree) {
  return histogramBucket(maxDegree) + 1;
}

GraphProfile gnnc::graph::analyzeGraph(const CsrGraph &g,
                                       const AnalysisOptions &options) {
  GraphProfile p;
  p.numRows = g.numRows;
  p.numCols = g.numCols;
  p.nnz = g.nnz();
  p.reuseWindowRows = options.reuseWindowRows;
  p.featureBytesPerRow = options.featureBytesPerRow;
  p.fingerprint = graphFingerprint(g);
  p.fingerprintHex = fingerprintToHex(p.fingerprint);
  if (g.numRows == 0) {
    p.degreeHistogram.assign(1, 0);
    return p;
  }

  // Degree moments, extremes and the histogram from rowPtr alone.
  const int64_t n = g.numRows;
  std::vector<int64_t> degrees(n);
  int64_t minDegree = std::numeric_limits<int64_t>::max(), maxDegree = 0;
  for (int64_t r = 0; r < n; ++r) {
    int64_t d = g.rowPtr[r + 1] - g.rowPtr[r];
    degrees[r] = d;
    minDegree = std::min(minDegree, d);
    maxDegree = std::max(maxDegree, d);
  }
  p.minDegree = minDegree;
  p.maxDegree = maxDegree;
  p.meanDegree = static_cast<double>(p.nnz) / static_cast<double>(n);
  p.degreeHistogram.assign(histogramBucketCount(maxDegree), 0);
  double m2 = 0, m3 = 0;
  int64_t groups[std::size(kProfileGroupSizes)] = {};
  for (int64_t d : degrees) {
    double dev = static_cast<double>(d) - p.meanDegree;
    m2 += dev * dev;
    m3 += dev * dev * dev;
    ++p.degreeHistogram[histogramBucket(d)];
    for (size_t i = 0; i < std::size(kProfileGroupSizes); ++i)
      groups[i] += (d + kProfileGroupSizes[i] - 1) / kProfileGroupSizes[i];
  }
  for (size_t i = 0; i < std::size(kProfileGroupSizes); ++i)
    p.neighbourGroups[kProfileGroupSizes[i]] = groups[i];
  p.emptyRows = p.degreeHistogram[0];
  m2 /= static_cast<double>(n);
  m3 /= static_cast<double>(n);
  p.stddevDegree = std::sqrt(m2);
  // Treat a variance at rounding level as zero (constant degrees).
  if (p.stddevDegree > 1e-12 * std::max(1.0, p.meanDegree))
    p.skewDegree = m3 / (m2 * p.stddevDegree);
  if (p.meanDegree > 0)
    p.coefficientOfVariation = p.stddevDegree / p.meanDegree;

  // Concentration: non-zeros of the longest 1% of rows.
  if (p.nnz > 0) {
    int64_t top = std::max<int64_t>(1, (n + 99) / 100);
    std::nth_element(degrees.begin(), degrees.begin() + (top - 1),
                     degrees.end(), std::greater<int64_t>());
    int64_t topNnz = 0;
    for (int64_t i = 0; i < top; ++i)
      topNnz += degrees[i];
    p.top1PercentNnzFraction =
        static_cast<double>(topNnz) / static_cast<double>(p.nnz);
  }
  std::vector<int64_t>().swap(degrees);

  // Locality, one pass over the non-zeros.
  if (p.nnz > 0 && g.numCols > 0) {
    std::vector<uint8_t> referenced(g.numCols, 0);
    double spanSum = 0, rowSpanSum = 0;
    int64_t nonEmpty = 0;
    for (int64_t r = 0; r < n; ++r) {
      int64_t begin = g.rowPtr[r], end = g.rowPtr[r + 1];
      if (begin == end)
        continue;
      int64_t rowSpan = 0, lo = g.colIdx[begin], hi = lo;
      for (int64_t e = begin; e < end; ++e) {
        int64_t c = g.colIdx[e];
        rowSpan += c > r ? c - r : r - c;
        lo = std::min(lo, c);
        hi = std::max(hi, c);
        referenced[c] = 1;
      }
      spanSum += static_cast<double>(rowSpan);
      rowSpanSum += static_cast<double>(hi - lo);
      ++nonEmpty;
    }
    double cols = static_cast<double>(g.numCols);
    p.meanEdgeSpan = spanSum / static_cast<double>(p.nnz) / cols;
    p.meanRowSpan = rowSpanSum / static_cast<double>(nonEmpty) / cols;
    for (uint8_t flag : referenced)
      p.referencedColumns += flag;
  }

  if (options.estimateReuse) {
    p.reuse = estimateFeatureReuse(g, options.reuseWindowRows);
    double bytes = static_cast<double>(options.featureBytesPerRow);
    p.estimatedFeatureBytes =
        static_cast<double>(p.reuse.loads - p.reuse.hits) * bytes;
    p.minimalFeatureBytes = static_cast<double>(p.referencedColumns) * bytes;
  }
  return p;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {

std::string formatDouble(double value, const char *format = "%.6g") {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

/// A JSON number; NaN and infinities (not representable) become null.
std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  return formatDouble(value, "%.10g");
}

/// Inclusive degree range of histogram bucket k.
std::pair<int64_t, int64_t> bucketRange(size_t k) {
  if (k == 0)
    return {0, 0};
  int64_t lo = int64_t(1) << (k - 1);
  return {lo, 2 * lo - 1};
}

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return formatDouble(bytes, "%.3g") + " " + units[unit];
}

} // namespace

std::string gnnc::graph::formatProfile(const GraphProfile &p) {
  std::ostringstream os;
  os << "graph " << p.numRows << " x " << p.numCols << ", nnz " << p.nnz
     << ", fingerprint " << p.fingerprintHex << "\n";
  os << "degree: min " << p.minDegree << ", mean " << formatDouble(p.meanDegree)
     << ", max " << p.maxDegree << ", stddev " << formatDouble(p.stddevDegree)
     << ", cv " << formatDouble(p.coefficientOfVariation) << ", skew "
     << formatDouble(p.skewDegree) << "\n";
  os << "empty rows: " << p.emptyRows << ", top 1% of rows hold "
     << formatDouble(100 * p.top1PercentNnzFraction, "%.2f")
     << "% of the non-zeros\n";
  os << "row-length histogram:\n";
  for (size_t k = 0; k < p.degreeHistogram.size(); ++k) {
    if (p.degreeHistogram[k] == 0)
      continue;
    auto [lo, hi] = bucketRange(k);
    char buf[96];
    if (lo == hi)
      std::snprintf(buf, sizeof(buf), "  %12lld       : %lld\n",
                    static_cast<long long>(lo),
                    static_cast<long long>(p.degreeHistogram[k]));
    else
      std::snprintf(buf, sizeof(buf), "  %12lld-%-6lld: %lld\n",
                    static_cast<long long>(lo), static_cast<long long>(hi),
                    static_cast<long long>(p.degreeHistogram[k]));
    os << buf;
  }
  os << "locality: mean |col - row| / cols " << formatDouble(p.meanEdgeSpan)
     << ", mean row span / cols " << formatDouble(p.meanRowSpan) << ", "
     << p.referencedColumns << " columns referenced\n";
  if (p.reuse.loads > 0)
    os << "feature reuse (estimate, LRU of " << p.reuseWindowRows << " rows x "
       << p.featureBytesPerRow << " B): hit rate "
       << formatDouble(100 * p.reuse.hitRate, "%.2f") << "%, ~"
       << formatBytes(p.estimatedFeatureBytes) << " loaded vs "
       << formatBytes(p.minimalFeatureBytes) << " minimum\n";
  return os.str();
}

std::string gnnc::graph::profileToJson(const GraphProfile &p) {
  std::ostringstream os;
  os << "{";
  os << "\"numRows\": " << p.numRows << ", \"numCols\": " << p.numCols
     << ", \"nnz\": " << p.nnz;
  os << ", \"meanDegree\": " << jsonNumber(p.meanDegree)
     << ", \"stddevDegree\": " << jsonNumber(p.stddevDegree)
     << ", \"minDegree\": " << p.minDegree << ", \"maxDegree\": " << p.maxDegree
     << ", \"skewDegree\": " << jsonNumber(p.skewDegree)
     << ", \"coefficientOfVariation\": " << jsonNumber(p.coefficientOfVariation)
     << ", \"emptyRows\": " << p.emptyRows;
  os << ", \"degreeHistogram\": [";
  for (size_t k = 0; k < p.degreeHistogram.size(); ++k) {
    auto [lo, hi] = bucketRange(k);
    os << (k ? ", " : "") << "{\"minDegree\": " << lo
       << ", \"maxDegree\": " << hi << ", \"rows\": " << p.degreeHistogram[k]
       << "}";
  }
  os << "]";
  os << ", \"top1PercentNnzFraction\": " << jsonNumber(p.top1PercentNnzFraction)
     << ", \"meanEdgeSpan\": " << jsonNumber(p.meanEdgeSpan)
     << ", \"meanRowSpan\": " << jsonNumber(p.meanRowSpan)
     << ", \"referencedColumns\": " << p.referencedColumns;
  os << ", \"reuseWindowRows\": " << p.reuseWindowRows
     << ", \"featureBytesPerRow\": " << p.featureBytesPerRow
     << ", \"reuseLoads\": " << p.reuse.loads
     << ", \"reuseHits\": " << p.reuse.hits
     << ", \"reuseHitRate\": " << jsonNumber(p.reuse.hitRate)
     << ", \"estimatedFeatureBytes\": " << jsonNumber(p.estimatedFeatureBytes)
     << ", \"minimalFeatureBytes\": " << jsonNumber(p.minimalFeatureBytes);
  os << ", \"fingerprint\": \"" << p.fingerprintHex << "\"";
  os << "}";
  return os.str();
}

const gnnc::graph::GraphProfile &
gnnc::graph::ProfileCache::get(const CsrGraph &g,
                               const AnalysisOptions &options) {
  if (graph_ != &g) {
    profiles_.clear();
    graph_ = &g;
  }
  auto key = std::make_tuple(options.reuseWindowRows,
                             options.featureBytesPerRow, options.estimateReuse);
  auto found = profiles_.find(key);
  if (found == profiles_.end())
    found = profiles_.emplace(key, analyzeGraph(g, options)).first;
  return found->second;
}
