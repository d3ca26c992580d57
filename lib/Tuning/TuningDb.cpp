//===- TuningDb.cpp - A text file of tuned schedules ----------------------===//
#include "gnnc/Tuning/TuningDb.h"

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
  os << e.key.fingerprint << " " << e.key.op << " " << e.key.type << " "
     << e.key.width << " " << (e.key.edgeValues ? "values" : "novalues") << " "
     << e.key.arch << " -> " << e.schedule.vectorWidth << " "
     << e.schedule.dimWorkers << " " << e.schedule.threadsPerBlock << " ";
  if (e.schedule.groupSize != 0)
    os << e.schedule.edgesPerWorker << " " << e.schedule.blocksPerSm << " "
       << e.schedule.groupSize << " ";
  else if (e.schedule.edgesPerWorker != 0 || e.schedule.blocksPerSm != 0)
    os << e.schedule.edgesPerWorker << " " << e.schedule.blocksPerSm << " ";
  os << formatSeconds(e.predictedSeconds) << " "
     << (e.measuredSeconds ? formatSeconds(*e.measuredSeconds) : "-") << "\n";
  return os.str();
}

Expected<TuningEntry> gnnc::tuning::parseEntry(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> f;
  std::string word;
  while (in >> word)
    f.push_back(word);
  if (f.size() != 12 && f.size() != 14 && f.size() != 15)
    return Status::error("expected 12 fields '<fingerprint> <op> <type> "
                         "<width> <values|novalues> <arch> -> <vw> <dw> <tpb> "
                         "<predicted> <measured|->' (14 with <edges_per_warp> "
                         "<blocks_per_sm> after <tpb>, 15 with <group_size> "
                         "after those), got " +
                         std::to_string(f.size()));
  // The optional schedule fields shift the times.
  const size_t extra = f.size() - 12;
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
  if (!parseInt(f[3], e.key.width) || e.key.width <= 0)
    return Status::error("width '" + f[3] + "' is not a positive integer");
  if (f[4] != "values" && f[4] != "novalues")
    return Status::error("expected 'values' or 'novalues', got '" + f[4] + "'");
  e.key.edgeValues = f[4] == "values";
  e.key.arch = f[5];
  if (f[5].rfind("sm_", 0) != 0)
    return Status::error("arch '" + f[5] + "' does not read sm_XX");
  if (f[6] != "->")
    return Status::error("expected '->' after the key, got '" + f[6] + "'");
  int64_t vw, dw, tpb;
  if (!parseInt(f[7], vw) || !parseInt(f[8], dw) || !parseInt(f[9], tpb) ||
      vw <= 0 || dw <= 0 || tpb <= 0 || vw > 8 || dw > 32 || tpb > 1024)
    return Status::error("schedule '" + f[7] + " " + f[8] + " " + f[9] +
                         "' is not vector_width dim_workers threads_per_block");
  e.schedule = {static_cast<int>(vw), static_cast<int>(dw),
                static_cast<int>(tpb)};
  if (extra) {
    int64_t ep, bps;
    if (!parseInt(f[10], ep) || !parseInt(f[11], bps) || ep < 0 ||
        (ep != 0 && ep < 8) || ep > (1 << 20) || bps < 0 || bps > 32)
      return Status::error("schedule '" + f[10] + " " + f[11] +
                           "' is not edges_per_warp (0 or 8 to 2^20) "
                           "blocks_per_sm (0 to 32)");
    e.schedule.edgesPerWorker = static_cast<int>(ep);
    e.schedule.blocksPerSm = static_cast<int>(bps);
  }
  if (extra == 3) {
    int64_t gs;
    if (!parseInt(f[12], gs) || gs < 1 || gs > (1 << 20) ||
        e.schedule.edgesPerWorker != 0 || e.schedule.blocksPerSm != 0)
      return Status::error("schedule '" + f[10] + " " + f[11] + " " + f[12] +
                           "' is not 0 0 group_size (1 to 2^20)");
    e.schedule.groupSize = static_cast<int>(gs);
  }
  const std::string &predicted = f[10 + extra], &measured = f[11 + extra];
  if (!parseSeconds(predicted, e.predictedSeconds))
    return Status::error("predicted time '" + predicted + "' is not a number");
  if (measured != "-") {
    double m;
    if (!parseSeconds(measured, m))
      return Status::error("measured time '" + measured +
                           "' is not a number or '-'");
    e.measuredSeconds = m;
  }
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
