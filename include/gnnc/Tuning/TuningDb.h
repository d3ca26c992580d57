//===- TuningDb.h - A text file of tuned schedules --------------*- C++ -*-===//
//
// One entry per line: the key, the predicted and measured seconds (or '-'),
// and the schedule in its text form:
//   <fingerprint> <op> <type> <width> <values|novalues> <arch> ->
//   <predicted seconds> <measured seconds or '-'> #gnn.schedule<...>
// e.g.
//   0123456789abcdef spmm f32 64 novalues sm_90 -> 1.2000e-03 - \
//     #gnn.schedule<vector_width = 4, dim_workers = 16, threads_per_block =
//     256>
// (on one line). `<op>` is spmm, sddmm (gnn.sddmm with form = dot) or
// sddmm_add (form = add); a gnn.sddmm is keyed `novalues`. A segmented
// matmul reads no graph; it is keyed by its segments' statistics instead:
//   segments <types> <mean rows> <spread %> <op> <type> <K> <M> <arch> ->
//   <predicted seconds> <measured seconds or '-'> #gnn.schedule<...>
// with `<op>` segment_matmul, segment_matmul_dx (transpose_weights) or
// segment_matmul_dw and `<type>` f32, tf32 (f32 on tensor cores), f16 or
// bf16. `#` starts a
// comment line. Entries are appended with a single write() on a file opened
// with O_APPEND, so concurrent tuners do not interleave lines; a later entry
// for the same key wins. Malformed lines (and those of the older format,
// which spelled the schedule as numbers) are reported as
// `file:line: message` and skipped.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_TUNINGDB_H
#define GNNC_TUNING_TUNINGDB_H

#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/runtime/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace gnnc::tuning {

/// What a segmented matmul's schedule is tuned for in place of a graph:
/// its segments' type count, mean rows per type (rounded,
/// segmentTuningKey) and spread (standard deviation over mean, in
/// percent), and its input width K.
struct SegmentKey {
  int64_t types = 0;
  int64_t meanRows = 0;
  int64_t spreadPercent = 0;
  int64_t inputWidth = 0;

  bool operator==(const SegmentKey &o) const {
    return types == o.types && meanRows == o.meanRows &&
           spreadPercent == o.spreadPercent && inputWidth == o.inputWidth;
  }
};

/// What a tuned schedule is for.
struct TuningKey {
  /// graph::fingerprintToHex of the graph.
  std::string fingerprint;
  /// "spmm", "sddmm" (form = dot) or "sddmm_add" (tuningOpName).
  std::string op = "spmm";
  /// "f32", "f16" or "bf16".
  std::string type = "f32";
  int64_t width = 0;
  bool edgeValues = false;
  std::string arch = "sm_90";
  /// Set for the segmented matmuls (whose fingerprint is empty).
  std::optional<SegmentKey> segments;

  bool operator==(const TuningKey &o) const {
    return fingerprint == o.fingerprint && op == o.op && type == o.type &&
           width == o.width && edgeValues == o.edgeValues && arch == o.arch &&
           segments == o.segments;
  }
};

/// One database line.
struct TuningEntry {
  TuningKey key;
  Schedule schedule;
  double predictedSeconds = 0;
  std::optional<double> measuredSeconds;
};

/// The line for `entry` (with its newline).
std::string formatEntry(const TuningEntry &entry);

/// Parses one line (without newline); the error says what is wrong.
Expected<TuningEntry> parseEntry(const std::string &line);

/// `$GNNC_TUNE_DB` if set, else `$HOME/.cache/gnnc/tuning.db`.
std::string defaultDatabasePath();

/// The entries of a database file.
class TuningDb {
public:
  /// Reads `path`; a missing file is an empty database. Malformed lines are
  /// skipped and listed in warnings(); only an unreadable file fails.
  static Expected<TuningDb> load(const std::string &path);

  const std::string &path() const { return path_; }
  const std::vector<TuningEntry> &entries() const { return entries_; }
  /// `path:line: message` for every skipped line.
  const std::vector<std::string> &warnings() const { return warnings_; }

  /// The last entry for `key`.
  std::optional<TuningEntry> lookup(const TuningKey &key) const;

  /// Appends `entry` to the file (creating it and its directory) with one
  /// O_APPEND write, and to entries().
  Status store(const TuningEntry &entry);

private:
  std::string path_;
  std::vector<TuningEntry> entries_;
  std::vector<std::string> warnings_;
};

} // namespace gnnc::tuning

#endif // GNNC_TUNING_TUNINGDB_H
