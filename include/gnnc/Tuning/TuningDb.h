//===- TuningDb.h - A text file of tuned schedules --------------*- C++ -*-===//
//
// One entry per line:
//   <fingerprint> <op> <type> <width> <values|novalues> <arch> -> <vw> <dw>
//   <tpb> <predicted seconds> <measured seconds or '-'>
// e.g.
//   0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 1.2e-03 -
// An edge_parallel schedule or one with blocks_per_sm adds `<edges_per_warp>
// <blocks_per_sm>` after `<tpb>` (14 fields), e.g.
//   0123456789abcdef spmm f32 64 novalues sm_90 -> 4 16 256 256 0 4.1e-04 -
// and a neighbor_group one `0 0 <group_size>` (15 fields). `<op>` is spmm,
// sddmm (gnn.sddmm with form = dot) or sddmm_add (form = add); a gnn.sddmm
// is keyed `novalues`, e.g.
//   0123456789abcdef sddmm f16 64 novalues sm_90 -> 8 8 256 2.3e-04 -
// `#` starts a comment line. Entries are appended with a single write() on
// a file opened with O_APPEND, so concurrent tuners do not interleave lines;
// a later entry for the same key wins. Malformed lines are reported as
// `file:line: message` and skipped.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TUNING_TUNINGDB_H
#define GNNC_TUNING_TUNINGDB_H

#include "gnnc/Tuning/CostModel.h"
#include "gnnc/runtime/Status.h"

#include <optional>
#include <string>
#include <vector>

namespace gnnc::tuning {

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

  bool operator==(const TuningKey &o) const {
    return fingerprint == o.fingerprint && op == o.op && type == o.type &&
           width == o.width && edgeValues == o.edgeValues && arch == o.arch;
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
