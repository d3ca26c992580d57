//===- gnn-graph.cpp - Inspect and renumber graphs ------------------------===//
//
//   gnn-graph info FILE | --rmat SCALE [--json]
//   gnn-graph reorder FILE | --rmat SCALE --order degree|rcm|community
//             [-o OUT.mtx] [--perm OUT.txt]
//   gnn-graph snapshots FILE.npz | rmat:scale=S,snapshots=T,churn=C,...
//             [--group N]
//
// `info` prints the profile gnnc's scheduling will use (degrees, histogram,
// locality, feature-reuse estimate, fingerprint). `reorder` computes a
// renumbering, reports its cost and what it changes (bandwidth, reuse
// estimate), and optionally writes the renumbered graph as Matrix Market and
// the permutation (line i: the original id of new node i). `snapshots`
// reads a dynamic graph (a temporal .npz) or generates an evolving R-MAT
// one, splits it into groups of N snapshots (PiPAD's shared and exclusive
// edges) and prints each group's overlap rate.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tools/ToolSupport.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Readers.h"
#include "gnnc/graph/Reorder.h"
#include "gnnc/graph/Rmat.h"
#include "gnnc/graph/Snapshots.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>

using namespace gnnc;
using namespace gnnc::graph;

namespace {

void usage() {
  std::printf("usage: gnn-graph info (FILE | --rmat SCALE) [--json]\n"
              "       gnn-graph reorder (FILE | --rmat SCALE) --order "
              "degree|rcm|community\n"
              "                 [-o OUT.mtx] [--perm OUT.txt] [--force]\n"
              "       gnn-graph snapshots (FILE.npz | rmat:KEY=VALUE,...) "
              "[--group N]\n"
              "FILE is .mtx, .mtx.gz, .npz (CSR) or a SNAP edge list. --rmat "
              "generates an\n"
              "R-MAT graph (Graph500 parameters, 16 edges per node, seed 1).\n"
              "Existing output files are kept unless --force is given.\n"
              "snapshots reads a temporal .npz (per-snapshot edge lists or "
              "stream windows)\n"
              "or generates an evolving R-MAT graph (keys scale, edge_factor, "
              "snapshots,\n"
              "churn, seed, undirected=0|1) and prints the overlap of groups "
              "of N (default 4).\n");
}

int fail(const std::string &message) {
  std::fprintf(stderr, "gnn-graph: error: %s\n", message.c_str());
  return 1;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// Writes `g` as a Matrix Market coordinate file (real when it has values).
Status writeMatrixMarket(const CsrGraph &g, const std::string &path) {
  std::ofstream os(path);
  if (!os)
    return Status::error(path + ": cannot open for writing");
  os << "%%MatrixMarket matrix coordinate "
     << (g.hasValues() ? "real" : "pattern") << " general\n";
  os << "% written by gnn-graph\n";
  os << g.numRows << " " << g.numCols << " " << g.nnz() << "\n";
  for (int64_t r = 0; r < g.numRows; ++r)
    for (int64_t e = g.rowPtr[r]; e < g.rowPtr[r + 1]; ++e) {
      os << r + 1 << " " << g.colIdx[e] + 1;
      if (g.hasValues())
        os << " " << g.values[e];
      os << "\n";
    }
  os.close();
  if (!os)
    return Status::error(path + ": write failed");
  return Status::ok();
}

/// The evolving R-MAT options of a spec "rmat:scale=12,snapshots=8,...".
Expected<EvolvingRmatOptions> rmatSpec(const std::string &spec) {
  EvolvingRmatOptions o;
  std::string rest = spec.substr(5);
  for (size_t pos = 0; pos < rest.size();) {
    size_t end = rest.find(',', pos);
    if (end == std::string::npos)
      end = rest.size();
    std::string item = rest.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    char *stop = nullptr;
    double number = std::strtod(value.c_str(), &stop);
    if (value.empty() || *stop != '\0')
      return Status::error(spec + ": '" + item +
                           "': expected KEY=NUMBER (keys scale, edge_factor, "
                           "snapshots, churn, seed, undirected)");
    bool whole = std::isfinite(number) && std::fabs(number) < 0x1p62 &&
                 number == std::floor(number);
    if (key != "churn" && !whole)
      return Status::error(spec + ": " + key + " takes a whole number, got '" +
                           value + "'");
    if (key == "scale") {
      if (number < 0 || number > 26)
        return Status::error(spec + ": scale must be from 0 to 26");
      o.scale = static_cast<int>(number);
    } else if (key == "edge_factor") {
      if (number < 0 || number > 1024)
        return Status::error(spec + ": edge_factor must be from 0 to 1024");
      o.edgeFactor = static_cast<int>(number);
    } else if (key == "snapshots") {
      if (number < 1 || number > 4096)
        return Status::error(spec + ": snapshots must be from 1 to 4096");
      o.snapshots = static_cast<int64_t>(number);
    } else if (key == "churn") {
      o.churn = number;
    } else if (key == "seed") {
      if (number < 0)
        return Status::error(spec + ": seed must not be negative");
      o.seed = static_cast<uint64_t>(number);
    } else if (key == "undirected") {
      if (number != 0 && number != 1)
        return Status::error(spec + ": undirected is 0 or 1");
      o.undirected = number == 1;
    } else {
      return Status::error(spec + ": unknown key '" + key +
                           "' (keys scale, edge_factor, snapshots, churn, "
                           "seed, undirected)");
    }
  }
  return o;
}

/// gnn-graph snapshots: the overlap of every group of a series.
int runSnapshots(int argc, char **argv) {
  std::string source;
  int64_t groupSize = 4;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--group" && i + 1 < argc) {
      char *stop = nullptr;
      long long n = std::strtoll(argv[++i], &stop, 10);
      if (*stop != '\0' || n < 1)
        return fail("--group: expected a positive number of snapshots, got '" +
                    std::string(argv[i]) + "'");
      groupSize = n;
    } else if (!arg.empty() && arg[0] != '-' && source.empty()) {
      source = arg;
    } else {
      usage();
      return fail("bad argument '" + arg + "'");
    }
  }
  if (source.empty()) {
    usage();
    return fail("snapshots: give a temporal .npz or rmat:KEY=VALUE,...");
  }
  auto start = std::chrono::steady_clock::now();
  auto load = [&]() -> Expected<SnapshotSeries> {
    if (source.rfind("rmat:", 0) != 0)
      return readSnapshotSeries(source);
    Expected<EvolvingRmatOptions> options = rmatSpec(source);
    if (!options)
      return options.status();
    return generateEvolvingRmat(*options);
  };
  Expected<SnapshotSeries> series = load();
  if (!series)
    return fail(series.message());
  double loadSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  Expected<std::vector<SnapshotGroup>> groups =
      overlapGroups(*series, groupSize);
  if (!groups)
    return fail(groups.message());
  double groupSeconds = secondsSince(start);

  int64_t edges = 0;
  for (const CsrGraph &g : series->snapshots)
    edges += g.nnz();
  std::printf("series     %s: %lld snapshots, %lld nodes, %lld edges\n",
              series->name.c_str(), (long long)series->size(),
              (long long)series->numNodes, (long long)edges);
  int64_t shared = 0, stored = 0, total = 0;
  for (size_t k = 0; k < groups->size(); ++k) {
    const SnapshotGroup &g = (*groups)[k];
    std::printf("group %-4zu snapshots %lld-%lld: overlap %lld edges, "
                "exclusive %lld, overlap rate %.4f\n",
                k, (long long)g.first, (long long)(g.first + g.size() - 1),
                (long long)g.overlap.nnz(),
                (long long)(g.storedEdges() - g.overlap.nnz()),
                g.overlapRate());
    shared += g.overlap.nnz() * g.size();
    stored += g.storedEdges();
    total += g.snapshotEdges();
  }
  std::printf("total      groups of %lld: overlap rate %.4f, stored edges / "
              "snapshot edges %.4f\n",
              (long long)groupSize, total ? double(shared) / total : 0.0,
              total ? double(stored) / total : 0.0);
  std::printf("time       load %.3f s, groups %.3f s\n", loadSeconds,
              groupSeconds);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  gnnc::tools::installFailureHandlers("gnn-graph");
  if (argc < 2 || std::string(argv[1]) == "--help" ||
      std::string(argv[1]) == "-h") {
    usage();
    return argc < 2 ? 1 : 0;
  }
  std::string command = argv[1];
  if (command == "snapshots")
    return runSnapshots(argc, argv);
  if (command != "info" && command != "reorder") {
    usage();
    return fail("unknown command '" + command + "'");
  }
  std::string file, order, out, permOut;
  int scale = 0;
  bool json = false, force = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    const char *v = nullptr;
    if (arg == "--json") {
      json = true;
    } else if (arg == "--force") {
      force = true;
    } else if (arg == "--rmat" && (v = next())) {
      scale = std::atoi(v);
      if (scale < 1 || scale > 26)
        return fail("--rmat: scale must be from 1 to 26");
    } else if (arg == "--order" && (v = next())) {
      order = v;
    } else if (arg == "-o" && (v = next())) {
      out = v;
    } else if (arg == "--perm" && (v = next())) {
      permOut = v;
    } else if (!arg.empty() && arg[0] != '-' && file.empty()) {
      file = arg;
    } else {
      usage();
      return fail("bad argument '" + arg + "'");
    }
  }
  if (file.empty() == (scale == 0)) {
    usage();
    return fail("give exactly one of FILE and --rmat SCALE");
  }

  auto start = std::chrono::steady_clock::now();
  CsrGraph g;
  if (!file.empty()) {
    auto loaded = readGraph(file);
    if (!loaded)
      return fail(loaded.message());
    g = loaded.take();
  } else {
    g = generateRmat(scale, 16, 1);
  }
  double loadSeconds = secondsSince(start);

  if (command == "info") {
    start = std::chrono::steady_clock::now();
    GraphProfile profile = analyzeGraph(g);
    double seconds = secondsSince(start);
    if (json) {
      std::printf("%s\n", profileToJson(profile).c_str());
    } else {
      std::printf("%s", formatProfile(profile).c_str());
      std::printf("load %.3f s, analysis %.3f s\n", loadSeconds, seconds);
    }
    return 0;
  }

  if (!isKnownOrder(order))
    return fail("--order must be degree, rcm or community");
  if (g.numRows != g.numCols)
    return fail("renumbering needs a square graph; this one is " +
                std::to_string(g.numRows) + " x " + std::to_string(g.numCols));
  for (const std::string &path : {out, permOut})
    if (!path.empty() && exists(path) && !force)
      return fail(path + ": exists; not overwriting it (use --force)");

  start = std::chrono::steady_clock::now();
  CommunityInfo info;
  auto ordered = orderByName(g, order, &info);
  if (!ordered)
    return fail(ordered.message());
  Permutation perm = ordered.take();
  double orderSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  auto renumbered = applyPermutation(g, perm);
  if (!renumbered)
    return fail(renumbered.message());
  double applySeconds = secondsSince(start);

  GraphProfile before = analyzeGraph(g), after = analyzeGraph(*renumbered);
  std::printf("order      %s: %.3f s to compute, %.3f s to apply\n",
              order.c_str(), orderSeconds, applySeconds);
  if (order == "community")
    std::printf("communities %lld\n", (long long)info.numCommunities);
  std::printf("bandwidth  mean |row - col|: %.1f -> %.1f\n",
              averageBandwidth(g), averageBandwidth(*renumbered));
  std::printf("reuse      feature-row hit rate (window %lld rows): %.3f -> "
              "%.3f\n",
              (long long)before.reuseWindowRows, before.reuse.hitRate,
              after.reuse.hitRate);
  if (!out.empty()) {
    Status st = writeMatrixMarket(*renumbered, out);
    if (!st)
      return fail(st.message());
    std::printf("wrote      %s\n", out.c_str());
  }
  if (!permOut.empty()) {
    std::ofstream os(permOut);
    for (int64_t oldId : perm.newToOld)
      os << oldId << "\n";
    if (!os)
      return fail(permOut + ": write failed");
    std::printf("wrote      %s (line i: original id of new node i)\n",
                permOut.c_str());
  }
  return 0;
}
