//===- Json.cpp - JSON records of the bench results -----------------------===//
#include "gnnc/Bench/Json.h"

#include <ctime>

using namespace gnnc;
using namespace gnnc::bench;

nlohmann::json gnnc::bench::toJson(const TimingStats &stats) {
  return {{"median", stats.medianMs},
          {"min", stats.minMs},
          {"max", stats.maxMs},
          {"runs", stats.runs}};
}

nlohmann::json gnnc::bench::bandwidthJson(const ByteCounts &bytes,
                                          double medianMs, double copyGbs) {
  nlohmann::json j;
  j["bytes_compulsory"] = bytes.compulsory;
  j["bytes_gather"] = bytes.gather;
  double compulsory = gigabytesPerSecond(bytes.compulsory, medianMs);
  double gather = gigabytesPerSecond(bytes.gather, medianMs);
  j["gbs_compulsory"] = compulsory;
  j["gbs_gather"] = gather;
  if (copyGbs > 0) {
    j["frac_copy_compulsory"] = compulsory / copyGbs;
    j["frac_copy_gather"] = gather / copyGbs;
  }
  return j;
}

nlohmann::json gnnc::bench::toJson(const KernelResult &r,
                                   const ByteCounts &bytes, double copyGbs,
                                   double cusparseDefaultMs,
                                   double cusparseFastestMs) {
  nlohmann::json j;
  j["label"] = r.label;
  j["kernel"] = r.kernelName;
  j["schedule"] = r.schedule;
  j["edge_values"] = r.edgeValues;
  j["op"] = r.op;
  j["status"] = r.status;
  j["report"] = r.report;
  j["load_ms"] = r.loadMs;
  if (!r.timing) {
    j["time_ms"] = nullptr;
    return j;
  }
  j["time_ms"] = toJson(*r.timing);
  j.update(bandwidthJson(bytes, r.timing->medianMs, copyGbs));
  double ms = r.timing->medianMs;
  if (cusparseDefaultMs > 0 && ms > 0)
    j["speedup_vs_cusparse_default"] = cusparseDefaultMs / ms;
  if (cusparseFastestMs > 0 && ms > 0)
    j["speedup_vs_cusparse_fastest"] = cusparseFastestMs / ms;
  return j;
}

std::string gnnc::bench::utcTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

LibraryRuns
gnnc::bench::recordLibraryRuns(const std::vector<LibraryResult> &results) {
  LibraryRuns out;
  for (const LibraryResult &r : results) {
    nlohmann::json a = {
        {"algorithm", r.algorithm}, {"status", r.status}, {"types", r.types}};
    if (r.timing) {
      a["time_ms"] = toJson(*r.timing);
      if (r.status == "ok" &&
          (out.fastestMs == 0 || r.timing->medianMs < out.fastestMs)) {
        out.fastestMs = r.timing->medianMs;
        out.fastestAlgorithm = r.algorithm;
      }
    }
    out.runs.push_back(a);
  }
  return out;
}
