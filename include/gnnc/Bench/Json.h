//===- Json.h - JSON records of the bench results ---------------*- C++ -*-===//
//
// The JSON records gnn-bench writes: timings, bandwidth figures against the
// traffic bounds, the record of one gnnc kernel, and the timestamp.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_JSON_H
#define GNNC_BENCH_JSON_H

#include "gnnc/Bench/Bytes.h"
#include "gnnc/Bench/Cusparse.h"
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/runtime/Timing.h"

#include <nlohmann/json.hpp>

#include <string>

namespace gnnc::bench {

/// {"median": .., "min": .., "max": .., "runs": ..} in ms.
nlohmann::json toJson(const TimingStats &stats);

/// Bandwidth figures of one timing against a problem's bounds and the
/// measured copy bandwidth (GB/s; copyGbs <= 0 leaves the fractions out).
nlohmann::json bandwidthJson(const ByteCounts &bytes, double medianMs,
                             double copyGbs);

/// The record of one gnnc kernel, with its bandwidth figures and, when the
/// cuSPARSE times are positive, its speedups over them.
nlohmann::json toJson(const KernelResult &result, const ByteCounts &bytes,
                      double copyGbs, double cusparseDefaultMs,
                      double cusparseFastestMs);

/// The records of a library's runs (algorithm, status, types, time) and the
/// fastest of those that ran and passed (ms 0 when none did).
struct LibraryRuns {
  nlohmann::json runs = nlohmann::json::array();
  double fastestMs = 0;
  std::string fastestAlgorithm;
};
LibraryRuns recordLibraryRuns(const std::vector<LibraryResult> &results);

/// The current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utcTimestamp();

} // namespace gnnc::bench

#endif // GNNC_BENCH_JSON_H
