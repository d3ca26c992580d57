//===- SpmmVariants.cpp - Generated gnn.spmm kernels for tests ------------===//
#include "SpmmVariants.h"

#include "gnnc/Plan/Limits.h"

#include <algorithm>
#include <iterator>
#include <sstream>

using namespace gnnc::test;

std::string SpmmVariant::kernelName() const {
  std::string name = op + "_" + type + "_w" + std::to_string(width) +
                     (values ? "_ve" : "_v") + "_" + offsets;
  if (!reduce.empty())
    name += "_" + reduce;
  if (!scale.empty())
    name += "_" + scale;
  if (!self.empty())
    name += "_self";
  if (stride != 0)
    name += "_s" + std::to_string(stride);
  if (!schedule.empty())
    name += "_" + (tag.empty() ? std::string("scalar") : tag);
  return name;
}

std::string SpmmVariant::featureType() const {
  std::string t = "tensor<?x" + std::to_string(width) + "x" + type;
  if (stride != 0)
    t += ", #gnn.rows<stride = " + std::to_string(stride) + ">";
  return t + ">";
}

const char *const gnnc::test::kEdgeSchedule =
    "strategy = edge_parallel, edges_per_warp = 64";
const char *const gnnc::test::kSmallEdgeSchedule =
    "strategy = edge_parallel, edges_per_warp = 8, vector_width = 1, "
    "dim_workers = 8, threads_per_block = 64";

const char *const gnnc::test::kPairEdgeSchedule =
    "strategy = edge_parallel, edges_per_warp = 64, vector_width = 2";

/// One thread per feature, 32 to a row: no vector loads.
static const char *const kScalarSchedule =
    "vector_width = 1, dim_workers = 32, threads_per_block = 128";

/// The feature widths of the sweeps: narrower than any vector (1, 3), none
/// of the vector widths divides it (41), and powers of two.
static const int64_t kWidths[] = {1, 3, 16, 32, 41, 64, 128, 256};

/// Schedules and the tags that name their kernels.
using TaggedSchedules = std::vector<std::pair<std::string, const char *>>;

/// Adds `v` with the default and the scalar schedule and with 64 items per
/// edge-parallel worker, and, for a narrow and a wide width (3, 64), with 8
/// (a hub split between thousands of workers).
static void addScalarAndEdgeParallel(std::vector<SpmmVariant> &variants,
                                     SpmmVariant v) {
  variants.push_back(v);
  v.schedule = kScalarSchedule;
  variants.push_back(v);
  v.schedule = kEdgeSchedule;
  v.tag = "ep";
  variants.push_back(v);
  if (v.width == 3 || v.width == 64) {
    v.schedule = kSmallEdgeSchedule;
    v.tag = "ep8";
    variants.push_back(v);
  }
}

/// Adds `type` features of every width of the sweep under each of
/// `schedules`, with edge values except at width 64.
static void addEveryWidth(std::vector<SpmmVariant> &variants, const char *type,
                          const TaggedSchedules &schedules) {
  for (int64_t width : kWidths)
    for (const auto &[schedule, tag] : schedules) {
      SpmmVariant v{type, width, width != 64, "i64", schedule};
      v.tag = tag;
      variants.push_back(v);
    }
}

/// Adds `v` with the two edge-parallel schedules, and for 16-bit types the
/// one that keeps pairs packed in 32-bit words.
static void addEdgeParallel(std::vector<SpmmVariant> &variants, SpmmVariant v) {
  v.schedule = kEdgeSchedule;
  v.tag = "ep";
  variants.push_back(v);
  v.schedule = kSmallEdgeSchedule;
  v.tag = "ep8";
  variants.push_back(v);
  if (v.type != "f32" && v.width % 2 == 0) {
    v.schedule = kPairEdgeSchedule;
    v.tag = "ep2";
    variants.push_back(v);
  }
}

std::vector<SpmmVariant> gnnc::test::allSpmmVariants() {
  std::vector<SpmmVariant> variants;
  for (const char *type : {"f32", "f16", "bf16"})
    for (int64_t width : kWidths)
      for (bool values : {false, true}) {
        variants.push_back({type, width, values, "i64", ""});
        variants.push_back({type, width, values, "i64", kScalarSchedule});
        if (width == 41 || width == 64)
          variants.push_back({type, width, values, "i32", ""});
        addEdgeParallel(variants, {type, width, values, "i64", ""});
        if (width == 64)
          addEdgeParallel(variants, {type, width, values, "i32", ""});
      }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allSddmmVariants() {
  std::vector<SpmmVariant> variants;
  for (const char *op : {"sddmm_dot", "sddmm_add"})
    for (const char *type : {"f32", "f16", "bf16"})
      for (int64_t width : kWidths)
        for (bool leaky : {false, true}) {
          SpmmVariant v{type, width, leaky, "i64", "", op};
          addScalarAndEdgeParallel(variants, v);
          // Neighbour groups: the default size, groups of one edge (no
          // ranges), and groups of 3 (a group ends inside a window of
          // lanes) with one lane per group.
          SpmmVariant g = v;
          g.schedule = "strategy = neighbor_group";
          g.tag = "ng";
          variants.push_back(g);
          g.schedule = "strategy = neighbor_group, group_size = 1";
          g.tag = "ng1";
          variants.push_back(g);
          if (width == 3 || width == 64) {
            g.schedule = "strategy = neighbor_group, group_size = 3, "
                         "vector_width = 1, dim_workers = 1, "
                         "threads_per_block = 64";
            g.tag = "ng3";
            variants.push_back(g);
          }
          if (!leaky && std::string(type) != "f32" && width % 2 == 0) {
            v.schedule = kPairEdgeSchedule;
            v.tag = "ep2";
            variants.push_back(v);
          }
        }
  // Batches that are not a power of two (12 accumulators a thread leave
  // room for 5 edges' loads), whose sums across the worker's threads are
  // padded: 5 edges over 8 threads of a group, and over 2 threads of an
  // edge-parallel worker.
  for (const char *type : {"f32", "f16"}) {
    SpmmVariant g{type,
                  96,
                  true,
                  "i64",
                  "strategy = neighbor_group, vector_width = 4, "
                  "dim_workers = 8",
                  "sddmm_dot"};
    g.tag = "ng5";
    variants.push_back(g);
    SpmmVariant e{type,
                  24,
                  false,
                  "i64",
                  "strategy = edge_parallel, edges_per_warp = 64, "
                  "vector_width = 4, dim_workers = 2",
                  "sddmm_dot"};
    e.tag = "ep5";
    variants.push_back(e);
  }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allScaledSpmmVariants() {
  std::vector<SpmmVariant> variants;
  const std::pair<const char *, const char *> kinds[] = {
      {"mean", ""},     {"", "left"}, {"", "right"},  {"", "both"},
      {"mean", "both"}, {"max", ""},  {"max", "both"}};
  for (const auto &[reduce, scale] : kinds)
    for (const char *type : {"f32", "f16", "bf16"})
      for (int64_t width : {1, 41, 64})
        for (bool values : {false, true}) {
          SpmmVariant v{type, width, values, "i64", ""};
          v.reduce = reduce;
          v.scale = scale;
          addScalarAndEdgeParallel(variants, v);
          // GCN's aggregation with the tuner's longest merge-path stretch.
          if (reduce[0] == '\0' && std::string(scale) == "both" &&
              width == 64) {
            const std::string items = std::to_string(*std::max_element(
                std::begin(gnnc::defaults::kTunedEdgesPerWorker),
                std::end(gnnc::defaults::kTunedEdgesPerWorker)));
            v.schedule = "strategy = edge_parallel, edges_per_warp = " + items;
            v.tag = "ep" + items;
            variants.push_back(v);
          }
        }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allAccumulateSpmmVariants() {
  std::vector<SpmmVariant> variants;
  const std::pair<const char *, const char *> kinds[] = {
      {"", ""}, {"mean", ""}, {"mean", "both"}, {"", "right"}};
  const std::pair<std::string, const char *> schedules[] = {
      {"accumulate = f16, disc_batch = 32", "h32"},
      {std::string(kEdgeSchedule) + ", accumulate = f16, disc_batch = 32",
       "h32ep"},
      {std::string(kSmallEdgeSchedule) + ", accumulate = f16, disc_batch = 4",
       "h4ep8"}};
  for (const auto &[reduce, scale] : kinds)
    for (int64_t width : {3, 64})
      for (const auto &[schedule, tag] : schedules) {
        SpmmVariant v{"f16", width, width == 64, "i64", schedule};
        v.reduce = reduce;
        v.scale = scale;
        v.tag = tag;
        variants.push_back(v);
      }
  for (const char *type : {"f32", "f16", "bf16"}) {
    SpmmVariant v{type, 41, true, "i64", "disc_batch = 8"};
    v.reduce = "mean";
    v.scale = "both";
    v.tag = "d8";
    variants.push_back(v);
    v.schedule = std::string(kEdgeSchedule) + ", disc_batch = 8";
    v.tag = "d8ep";
    variants.push_back(v);
  }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allSelfTermSpmmVariants() {
  std::vector<SpmmVariant> variants;
  for (const char *type : {"f32", "f16", "bf16"})
    for (int64_t width : {1, 3, 64}) {
      SpmmVariant v{type, width, width == 3, "i64", ""};
      v.self = "0.25";
      variants.push_back(v);
      v.reduce = "mean";
      v.self = "-0.375";
      addEdgeParallel(variants, v);
    }
  SpmmVariant v{"f16", 64, true, "i64", "accumulate = f16, disc_batch = 32"};
  v.reduce = "mean";
  v.scale = "both";
  v.self = "0.5";
  v.tag = "h32";
  variants.push_back(v);
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allPaddedSpmmVariants() {
  std::vector<SpmmVariant> variants;
  struct Layout {
    const char *type;
    int64_t width, stride;
    std::vector<int> vectorWidths;
  };
  const Layout layouts[] = {{"f16", 41, 48, {8, 2}},
                            {"f16", 7, 8, {8}},
                            {"f32", 41, 44, {4}},
                            {"bf16", 3, 4, {4, 2}}};
  for (const Layout &l : layouts)
    for (int vw : l.vectorWidths)
      for (bool values : {false, true}) {
        SpmmVariant v{l.type, l.width, values, "i64", ""};
        v.stride = l.stride;
        std::string w = std::to_string(vw);
        v.schedule = "vector_width = " + w;
        v.tag = "vw" + w;
        variants.push_back(v);
        v.schedule = std::string(kEdgeSchedule) + ", vector_width = " + w;
        v.tag = "ep_vw" + w;
        variants.push_back(v);
        // 8 items per worker of 8 threads: a long row is split between
        // many workers, whose pieces meet in stride-sized workspace rows.
        v.schedule = "strategy = edge_parallel, edges_per_warp = 8, "
                     "vector_width = " +
                     w + ", dim_workers = 8, threads_per_block = 64";
        v.tag = "ep8_vw" + w;
        variants.push_back(v);
      }
  // The default schedule picks the widest load that divides the stride.
  for (const Layout &l : layouts) {
    SpmmVariant v{l.type, l.width, false, "i32", ""};
    v.stride = l.stride;
    variants.push_back(v);
  }
  // Row factors, max, the self term and f16 accumulation.
  for (const char *type : {"f32", "f16"}) {
    const bool f16 = std::string(type) == "f16";
    SpmmVariant v{type, 41, true, "i64", f16 ? "vector_width = 8" : ""};
    v.stride = f16 ? 48 : 44;
    v.tag = f16 ? "vw8" : "";
    v.reduce = "mean";
    v.scale = "both";
    variants.push_back(v);
    v.schedule = std::string(kEdgeSchedule);
    v.tag = "ep";
    variants.push_back(v);
    v.reduce = "max";
    v.scale = "";
    v.schedule = "";
    v.tag = "";
    variants.push_back(v);
    v.schedule = std::string(kEdgeSchedule);
    v.tag = "ep";
    variants.push_back(v);
    v.reduce = "";
    v.self = "0.25";
    v.schedule = "";
    v.tag = "";
    variants.push_back(v);
    v.reduce = "mean";
    v.self = "-0.375";
    v.schedule = std::string(kEdgeSchedule);
    v.tag = "ep";
    variants.push_back(v);
  }
  // Atomic pieces and neighbour groups add only the row's own elements of
  // the last chunk.
  for (const Layout &l : layouts) {
    SpmmVariant v{l.type, l.width, true, "i64", ""};
    v.stride = l.stride;
    std::string w = std::to_string(l.vectorWidths.front());
    v.schedule = "strategy = edge_parallel, edges_per_warp = 8, "
                 "dim_workers = 8, threads_per_block = 64, write = atomic, "
                 "vector_width = " +
                 w;
    v.tag = "ep8a_vw" + w;
    variants.push_back(v);
    v.schedule =
        "strategy = neighbor_group, group_size = 4, vector_width = " + w +
        ", dim_workers = 8, threads_per_block = 64";
    v.tag = "ng4_vw" + w;
    v.reduce = "mean";
    v.self = "0.5";
    variants.push_back(v);
  }
  for (const char *reduce : {"", "mean"}) {
    SpmmVariant v{"f16", 41, true, "i64",
                  "vector_width = 8, accumulate = f16, disc_batch = 32"};
    v.stride = 48;
    v.reduce = reduce;
    v.tag = "h32";
    variants.push_back(v);
    v.schedule = std::string(kEdgeSchedule) +
                 ", vector_width = 2, accumulate = f16, disc_batch = 32";
    v.tag = "h32ep";
    variants.push_back(v);
  }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::compileOnlyVariants() {
  std::vector<SpmmVariant> variants;
  for (const char *reduce : {"", "mean"})
    for (int64_t width : {3, 64}) {
      SpmmVariant v{"f16", width, width == 3, "i64", "accumulate = f16"};
      v.reduce = reduce;
      v.tag = "h";
      variants.push_back(v);
      v.schedule = std::string(kEdgeSchedule) + ", accumulate = f16";
      v.tag = "hep";
      variants.push_back(v);
    }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allEdgeSoftmaxVariants() {
  std::vector<SpmmVariant> variants;
  for (const char *type : {"f32", "f16", "bf16"})
    for (int64_t heads : {1, 4, 8}) {
      SpmmVariant v{type, heads, false, "i64", "", "edge_softmax"};
      variants.push_back(v);
      if (heads == 4) {
        v.offsets = "i32";
        variants.push_back(v);
        v.offsets = "i64";
      }
      v.schedule = "vector_width = 1, dim_workers = 8, "
                   "threads_per_block = 128";
      variants.push_back(v);
    }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allAtomicSpmmVariants() {
  std::vector<SpmmVariant> variants;
  const TaggedSchedules schedules = {
      {std::string(kEdgeSchedule) + ", write = atomic", "epa"},
      {std::string(kSmallEdgeSchedule) + ", write = atomic", "ep8a"},
      {"strategy = neighbor_group", "ng"},
      {"strategy = neighbor_group, group_size = 4, vector_width = 1, "
       "dim_workers = 8, threads_per_block = 64",
       "ng4"},
      // Groups with a smaller edge batch than the default (the tuner's).
      {"strategy = neighbor_group, edge_batch = 2", "nge2"}};
  for (const char *type : {"f32", "f16", "bf16"}) {
    addEveryWidth(variants, type, schedules);
    // The row factor on each piece, and the self term from the first
    // kernel.
    for (int s = 0; s < 4; s += 2) {
      SpmmVariant v{type, 64, true, "i32", schedules[s].first};
      v.tag = schedules[s].second;
      v.reduce = "mean";
      v.scale = "both";
      variants.push_back(v);
      v.scale = "";
      v.self = "0.5";
      v.schedule = schedules[s + 1].first;
      v.tag = schedules[s + 1].second;
      variants.push_back(v);
    }
  }
  // Discretized f16 batches carry the row factor into the pieces.
  for (int s = 0; s < 4; s += 2) {
    SpmmVariant v{"f16", 64, true, "i64",
                  schedules[s].first + ", accumulate = f16, disc_batch = 32"};
    v.reduce = "mean";
    v.tag = std::string("h32") + schedules[s].second;
    variants.push_back(v);
  }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allEdgeBatchSpmmVariants() {
  // Edge-parallel workers with fewer neighbour loads in flight than the
  // default batch: staged (the fix-up kernel) and atomic at every width;
  // gnn-bench's 512-item stretches in blocks of 128 where their row ends
  // fit in shared memory (a worker of 32 or 16 threads: widths 128, 64).
  std::vector<SpmmVariant> variants;
  const TaggedSchedules schedules = {
      {std::string(kEdgeSchedule) + ", edge_batch = 4", "epe4"},
      {std::string(kEdgeSchedule) + ", edge_batch = 2, write = atomic",
       "epe2a"}};
  for (const char *type : {"f32", "f16", "bf16"}) {
    addEveryWidth(variants, type, schedules);
    SpmmVariant v{type, 64, true, "i32", schedules[0].first};
    v.tag = schedules[0].second;
    v.reduce = "mean";
    v.scale = "both";
    variants.push_back(v);
    for (int64_t width : {64, 128}) {
      SpmmVariant wide{type, width, false, "i64",
                       "strategy = edge_parallel, edges_per_warp = 512, "
                       "threads_per_block = 128, edge_batch = 4"};
      wide.tag = "ep512e4";
      variants.push_back(wide);
    }
  }
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allSharedMergeSpmmVariants() {
  std::vector<SpmmVariant> variants;
  const TaggedSchedules schedules = {
      {std::string(kEdgeSchedule) + ", write = shared", "eps"},
      {std::string(kSmallEdgeSchedule) + ", write = shared", "ep8s"}};
  for (const char *type : {"f32", "f16", "bf16"}) {
    addEveryWidth(variants, type, schedules);
    // Row factors, max and the self term at the block's merge.
    for (const auto &[schedule, tag] : schedules) {
      SpmmVariant v{type, 64, true, "i32", schedule};
      v.tag = tag;
      v.reduce = "mean";
      v.scale = "both";
      variants.push_back(v);
      v.reduce = "max";
      v.scale = "";
      variants.push_back(v);
      v.reduce = "mean";
      v.self = "0.5";
      variants.push_back(v);
    }
  }
  SpmmVariant v{"f16", 64, true, "i64",
                std::string(kSmallEdgeSchedule) +
                    ", write = shared, accumulate = f16, disc_batch = 4"};
  v.reduce = "mean";
  v.tag = "h4ep8s";
  variants.push_back(v);
  v.width = 41;
  v.stride = 48;
  v.schedule = "strategy = edge_parallel, edges_per_warp = 8, vector_width "
               "= 8, dim_workers = 8, threads_per_block = 64, write = shared";
  v.tag = "ep8s_vw8";
  variants.push_back(v);
  return variants;
}

std::vector<SpmmVariant> gnnc::test::allVariants() {
  std::vector<SpmmVariant> variants = allSpmmVariants();
  for (auto more :
       {allSddmmVariants(), allScaledSpmmVariants(), allEdgeSoftmaxVariants(),
        allAccumulateSpmmVariants(), allSelfTermSpmmVariants(),
        allAtomicSpmmVariants(), allPaddedSpmmVariants(),
        allSharedMergeSpmmVariants(), allEdgeBatchSpmmVariants()})
    variants.insert(variants.end(), more.begin(), more.end());
  return variants;
}

std::string
gnnc::test::spmmModuleText(const std::vector<SpmmVariant> &variants) {
  std::ostringstream os;
  os << "gnn.module @t {\n";
  for (const SpmmVariant &v : variants) {
    std::string graph = "!gnn.graph<csr, " + v.offsets + ", i32>";
    std::string x = v.featureType();
    std::string w = "tensor<?x" + v.type + ">";
    std::string sched = v.schedule.empty()
                            ? ""
                            : "schedule = #gnn.schedule<" + v.schedule + ">";
    if (v.op == "edge_softmax") {
      std::string t = v.width == 1 ? w : x;
      os << "  gnn.kernel @" << v.kernelName() << "(%g: " << graph
         << ", %e: " << t << ") -> " << t << " {\n";
      os << "    %a = gnn.edge_softmax %g, %e";
      if (!sched.empty())
        os << " {" << sched << "}";
      os << " : " << graph << ", " << t << " -> " << t << "\n";
      os << "    gnn.return %a : " << t << "\n  }\n";
      continue;
    }
    if (v.op != "spmm") {
      bool add = v.op == "sddmm_add";
      std::string out = add ? x : w;
      std::string attrs = add ? "form = #gnn<sddmm_form add>" : "";
      if (v.values)
        attrs +=
            std::string(attrs.empty() ? "" : ", ") + "leaky_relu = 0.2 : f32";
      if (!sched.empty())
        attrs += (attrs.empty() ? "" : ", ") + sched;
      os << "  gnn.kernel @" << v.kernelName() << "(%g: " << graph
         << ", %a: " << x << ", %b: " << x << ") -> " << out << " {\n";
      os << "    %e = gnn.sddmm %g, %a, %b";
      if (!attrs.empty())
        os << " {" << attrs << "}";
      os << " : " << graph << ", " << x << ", " << x << " -> " << out << "\n";
      os << "    gnn.return %e : " << out << "\n  }\n";
      continue;
    }
    os << "  gnn.kernel @" << v.kernelName() << "(%g: " << graph
       << ", %x: " << x;
    if (v.values)
      os << ", %w: " << w;
    os << ") -> " << x << " {\n";
    os << "    %y = gnn.spmm %g, %x";
    if (v.values)
      os << " values(%w : " << w << ")";
    std::string attrs;
    if (!v.reduce.empty())
      attrs = "reduce = #gnn<reduce " + v.reduce + ">";
    if (!v.scale.empty())
      attrs += std::string(attrs.empty() ? "" : ", ") + "scale = #gnn<scale " +
               v.scale + ">";
    if (!v.self.empty())
      attrs += std::string(attrs.empty() ? "" : ", ") +
               "self_weight = " + v.self + " : f32";
    if (!sched.empty())
      attrs += (attrs.empty() ? "" : ", ") + sched;
    if (!attrs.empty())
      os << " {" << attrs << "}";
    os << " : " << graph << ", " << x << " -> " << x << "\n";
    os << "    gnn.return %y : " << x << "\n  }\n";
  }
  os << "}\n";
  return os.str();
}
