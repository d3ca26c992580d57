//===- TuningDb.cpp - A text file of tuned schedules ----------------------===//
#include "gnnc/Tuning/TuningDb.h"
#include "gnnc/Plan/Limits.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace gnnc;
using namespace gnnc::tuning;

namespace {

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = v;
  return true;
}

bool parseSeconds(const std::string &s, double &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno || *end || !std::isfinite(v) || v < 0)
    return false;
  out = v;
  return true;
}

std::string formatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4e", s);
  return buf;
}

/// Creates every missing directory of `dir` (mode 0755).
Status makeDirectories(const std::string &dir) {
  if (dir.empty())
    return Status::ok();
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty())
      continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return Status::error(
          partial + ": cannot create directory: " + std::strerror(errno));
  }
  return Status::ok();
}

} // namespace

std::string gnnc::tuning::formatEntry(const TuningEntry &e) {
  std::ostringstream os;
  if (const std::optional<SegmentKey> &seg = e.key.segments) {
    os << "segments " << seg->types << " " << seg->meanRows << " "
       << seg->spreadPercent << " " << e.key.op << " " << e.key.type << " "
       << seg->inputWidth << " " << e.key.width << " " << e.key.arch << " -> "
       << formatSeconds(e.predictedSeconds) << " "
       << (e.measuredSeconds ? formatSeconds(*e.measuredSeconds) : "-") << " "
       << e.schedule.str() << "\n";
    return os.str();
  }
  os << e.key.fingerprint << " " << e.key.op << " " << e.key.type << " "
     << e.key.width << " " << (e.key.edgeValues ? "values" : "novalues") << " "
     << e.key.arch << " -> " << formatSeconds(e.predictedSeconds) << " "
     << (e.measuredSeconds ? formatSeconds(*e.measuredSeconds) : "-") << " "
     << e.schedule.str() << "\n";
  return os.str();
}

namespace {

/// The end of an entry, `-> <predicted> <measured|-> #gnn.schedule<...>`,
/// from its words `arrow`, `predicted`, `measured` and the rest of the line.
Status parseEntryTail(const std::string &arrow, const std::string &predicted,
                      const std::string &measured, const std::string &schedule,
                      TuningEntry &e) {
  if (arrow != "->")
    return Status::error("expected '->' after the key, got '" + arrow + "'");
  double seconds = 0;
  if (!parseSeconds(predicted, seconds))
    return Status::error("predicted seconds '" + predicted +
                         "' is not a non-negative number");
  e.predictedSeconds = seconds;
  if (measured != "-") {
    double value = 0;
    if (!parseSeconds(measured, value))
      return Status::error("measured seconds '" + measured +
                           "' is neither '-' nor a non-negative number");
    e.measuredSeconds = value;
  }
  if (schedule.find("#gnn.schedule<") == std::string::npos)
    return Status::error("expected the schedule as '#gnn.schedule<...>' after "
                         "the times (entries written before schedules were "
                         "stored as text are no longer read: tune again)");
  Expected<Schedule> parsed = parseSchedule(schedule);
  if (!parsed)
    return parsed.status();
  GNNC_RETURN_IF_ERROR(checkScheduleFields(*parsed));
  e.schedule = *parsed;
  return Status::ok();
}

/// A segmented matmul's entry (SegmentKey; TuningDb.h):
///   segments <types> <mean rows> <spread %> <op> <type> <K> <M> <arch>
///   -> <predicted> <measured|-> #gnn.schedule<...>
Expected<TuningEntry> parseSegmentEntry(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> f;
  std::string word;
  while (f.size() < 12 && in >> word)
    f.push_back(word);
  std::string schedule;
  std::getline(in, schedule);
  if (f.size() < 12 || schedule.find_first_not_of(' ') == std::string::npos)
    return Status::error("expected 'segments <types> <mean rows> <spread %> "
                         "<op> <type> <K> <M> <arch> -> <predicted> "
                         "<measured|-> #gnn.schedule<...>'");
  TuningEntry e;
  SegmentKey seg;
  if (!parseInt(f[1], seg.types) || seg.types < 0)
    return Status::error("type count '" + f[1] +
                         "' is not a non-negative integer");
  if (!parseInt(f[2], seg.meanRows) || seg.meanRows < 0)
    return Status::error("mean rows '" + f[2] +
                         "' is not a non-negative integer");
  if (!parseInt(f[3], seg.spreadPercent) || seg.spreadPercent < 0)
    return Status::error("spread '" + f[3] +
                         "' is not a non-negative integer (percent)");
  e.key.op = f[4];
  if (f[4] != "segment_matmul" && f[4] != "segment_matmul_dx" &&
      f[4] != "segment_matmul_dw")
    return Status::error("unknown segmented op '" + f[4] +
                         "' (expected segment_matmul, segment_matmul_dx or "
                         "segment_matmul_dw)");
  e.key.type = f[5];
  if (f[5] != "f32" && f[5] != "tf32" && f[5] != "f16" && f[5] != "bf16")
    return Status::error("unknown element type '" + f[5] +
                         "' (expected f32, tf32, f16 or bf16)");
  if (!parseInt(f[6], seg.inputWidth) || seg.inputWidth <= 0 ||
      seg.inputWidth > limits::kMaxFeatureWidth)
    return Status::error("K '" + f[6] + "' is not an integer from 1 to " +
                         std::to_string(limits::kMaxFeatureWidth));
  if (!parseInt(f[7], e.key.width) || e.key.width <= 0 ||
      e.key.width > limits::kMaxFeatureWidth)
    return Status::error("M '" + f[7] + "' is not an integer from 1 to " +
                         std::to_string(limits::kMaxFeatureWidth));
  e.key.arch = f[8];
  if (f[8].rfind("sm_", 0) != 0)
    return Status::error("arch '" + f[8] + "' does not read sm_XX");
  e.key.fingerprint.clear();
  e.key.segments = seg;
  GNNC_RETURN_IF_ERROR(parseEntryTail(f[9], f[10], f[11], schedule, e));
  return e;
}

} // namespace

Expected<TuningEntry> gnnc::tuning::parseEntry(const std::string &line) {
  {
    std::istringstream first(line);
    std::string word;
    if (first >> word && word == "segments")
      return parseSegmentEntry(line);
  }
  // The key and the times are single words; the schedule, its text form,
  // is the rest of the line.
  std::istringstream in(line);
  std::vector<std::string> f;
  std::string word;
  while (f.size() < 9 && in >> word)
    f.push_back(word);
  std::string schedule;
  std::getline(in, schedule);
  if (f.size() < 9 || schedule.find_first_not_of(' ') == std::string::npos)
    return Status::error("expected '<fingerprint> <op> <type> <width> "
                         "<values|novalues> <arch> -> <predicted> "
                         "<measured|-> #gnn.schedule<...>'");
  TuningEntry e;
  e.key.fingerprint = f[0];
  if (f[0].size() != 16 ||
      f[0].find_first_not_of("0123456789abcdef") != std::string::npos)
    return Status::error("fingerprint '" + f[0] +
                         "' is not 16 lower-case hex digits");
  e.key.op = f[1];
  if (f[1] != "spmm" && f[1] != "sddmm" && f[1] != "sddmm_add")
    return Status::error("unknown op '" + f[1] +
                         "' (expected spmm, sddmm or sddmm_add)");
  e.key.type = f[2];
  if (f[2] != "f32" && f[2] != "f16" && f[2] != "bf16")
    return Status::error("unknown element type '" + f[2] + "'");
  if (!parseInt(f[3], e.key.width) || e.key.width <= 0 ||
      e.key.width > limits::kMaxFeatureWidth)
    return Status::error("width '" + f[3] + "' is not an integer from 1 to " +
                         std::to_string(limits::kMaxFeatureWidth));
  if (f[4] != "values" && f[4] != "novalues")
    return Status::error("expected 'values' or 'novalues', got '" + f[4] + "'");
  e.key.edgeValues = f[4] == "values";
  e.key.arch = f[5];
  if (f[5].rfind("sm_", 0) != 0)
    return Status::error("arch '" + f[5] + "' does not read sm_XX");
  GNNC_RETURN_IF_ERROR(parseEntryTail(f[6], f[7], f[8], schedule, e));
  return e;
}

std::string gnnc::tuning::defaultDatabasePath() {
  if (const char *env = std::getenv("GNNC_TUNE_DB"); env && *env)
    return env;
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/gnnc/tuning.db";
}

Expected<TuningDb> TuningDb::load(const std::string &path) {
  TuningDb db;
  db.path_ = path;
  std::ifstream in(path);
  if (!in) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0)
      return Status::error(path + ": cannot read the tuning database");
    return db;
  }
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#')
      continue;
    Expected<TuningEntry> e = parseEntry(line);
    if (!e) {
      db.warnings_.push_back(path + ":" + std::to_string(lineNo) + ": " +
                             e.message() + " (line skipped)");
      continue;
    }
    db.entries_.push_back(e.take());
  }
  return db;
}

std::optional<TuningEntry> TuningDb::lookup(const TuningKey &key) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->key == key)
      return *it;
  return std::nullopt;
}

Status TuningDb::store(const TuningEntry &entry) {
  size_t slash = path_.rfind('/');
  if (slash != std::string::npos)
    GNNC_RETURN_IF_ERROR(makeDirectories(path_.substr(0, slash)));
  std::string line = formatEntry(entry);
  int fd =
      ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::error(
        path_ + ": cannot open for appending: " + std::strerror(errno));
  // One write() of the whole line: with O_APPEND the kernel places it at the
  // end atomically with respect to other appenders.
  ssize_t written = ::write(fd, line.data(), line.size());
  int err = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size()))
    return Status::error(path_ + ": append failed: " +
                         (written < 0 ? std::strerror(err) : "short write"));
  entries_.push_back(entry);
  return Status::ok();
}
