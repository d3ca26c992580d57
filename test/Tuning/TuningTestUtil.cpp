//===- TuningTestUtil.cpp - Helpers of the tuner's tests ------------------===//
#include "TuningTestUtil.h"

#include "gnnc/Tuning/Tuner.h"
#include "gnnc/graph/Rmat.h"

#include <gtest/gtest.h>

#include <sstream>
#include <unistd.h>
#include <vector>

using namespace gnnc;
using namespace gnnc::tuning;

GpuModel test::sm90() { return *builtinGpuModel("sm_90"); }

graph::CsrGraph test::starGraph(int64_t n) {
  graph::CsrGraph g;
  g.numRows = g.numCols = n;
  g.rowPtr.push_back(0);
  for (int64_t c = 0; c < n; ++c)
    g.colIdx.push_back(c);
  g.rowPtr.push_back(n);
  for (int64_t r = 1; r < n; ++r) {
    g.colIdx.push_back((r * 7919) % n);
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
  return g;
}

graph::CsrGraph test::uniformGraph(int64_t n, int64_t degree) {
  graph::CsrGraph g;
  g.numRows = g.numCols = n;
  g.rowPtr.push_back(0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < degree; ++k)
      g.colIdx.push_back((r * 31 + k * 977) % n);
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
  return g;
}

std::string test::tempPath(const std::string &name) {
  return ::testing::TempDir() + "/gnnc-tuning-" + std::to_string(::getpid()) +
         "-" + name;
}

Schedule test::vertexSchedule(int32_t vw, int32_t dw, int32_t tpb,
                              int32_t bps) {
  Schedule s;
  s.vectorWidth = vw;
  s.dimWorkers = dw;
  s.threadsPerBlock = tpb;
  s.blocksPerSm = bps;
  return s;
}

Schedule test::edgeSchedule(int32_t vw, int32_t dw, int32_t tpb, int32_t items,
                            WriteMode write, int32_t bps) {
  Schedule s = vertexSchedule(vw, dw, tpb, bps);
  s.strategy = Strategy::EdgeParallel;
  s.edgesPerWarp = items;
  s.write = write;
  return s;
}

Schedule test::groupSchedule(int32_t vw, int32_t dw, int32_t tpb,
                             int32_t group) {
  Schedule s = vertexSchedule(vw, dw, tpb);
  s.strategy = Strategy::NeighborGroup;
  s.groupSize = group;
  s.write = WriteMode::Atomic;
  return s;
}

OpDesc test::spmmProblem(ElementType type, int64_t width, bool values,
                         int64_t stride) {
  OpDesc op = gnnc::spmmOp(type, width);
  op.rowStride = stride > 0 ? stride : width;
  op.edgeValues = values;
  return op;
}

OpDesc test::sddmmOp(ElementType type, int64_t width, bool add,
                     bool leakyRelu) {
  OpDesc op;
  op.kind = OpKind::Sddmm;
  op.type = type;
  op.width = width;
  op.rowStride = width;
  op.offsets64 = true;
  op.indices64 = false;
  op.form = add ? SddmmForm::Add : SddmmForm::Dot;
  if (leakyRelu)
    op.leakyRelu = static_cast<double>(0.2f);
  return op;
}

std::string test::kernelText(const OpDesc &op,
                             const std::optional<Schedule> &schedule) {
  std::string t = elementTypeName(op.type);
  std::string layout =
      op.padded() ? ", #gnn.rows<stride = " + std::to_string(op.stride()) + ">"
                  : "";
  std::string x =
      "tensor<?x" + std::to_string(op.width) + "x" + t + layout + ">";
  std::string g = std::string("!gnn.graph<csr, ") +
                  (op.offsets64 ? "i64" : "i32") + ", " +
                  (op.indices64 ? "i64" : "i32") + ">";
  std::vector<std::string> attrs;
  std::ostringstream os;
  os << "gnn.module @m {\n  gnn.kernel @k(%g: " << g << ", %x: " << x;
  if (op.kind == OpKind::Spmm) {
    const std::string scores = "tensor<?x" + t + ">";
    if (op.edgeValues)
      os << ", %w: " << scores;
    if (op.attention)
      os << ", %d: " << scores << ", %s: " << scores;
    os << ") -> " << x << " {\n    %y = gnn.spmm %g, %x";
    if (op.edgeValues)
      os << " values(%w : " << scores << ")";
    if (op.attention) {
      os << " attention(%d, %s : " << scores << ", " << scores << ")";
      if (op.leakyRelu)
        attrs.push_back("leaky_relu = 0.2 : f32");
    }
    if (op.reduce != Reduce::Sum)
      attrs.push_back(std::string("reduce = #gnn<reduce ") +
                      reduceName(op.reduce) + ">");
    if (op.scale != DegreeScale::None)
      attrs.push_back(std::string("scale = #gnn<scale ") +
                      degreeScaleName(op.scale) + ">");
  } else {
    std::string y = op.form == SddmmForm::Add ? x : "tensor<?x" + t + ">";
    os << ", %x1: " << x << ") -> " << y
       << " {\n    %y = gnn.sddmm %g, %x, %x1";
    if (op.form == SddmmForm::Add)
      attrs.push_back("form = #gnn<sddmm_form add>");
    if (op.leakyRelu)
      attrs.push_back("leaky_relu = 0.2 : f32");
  }
  if (schedule)
    attrs.push_back("schedule = " + schedule->str());
  if (!attrs.empty()) {
    os << " {";
    for (size_t i = 0; i < attrs.size(); ++i)
      os << (i ? ", " : "") << attrs[i];
    os << "}";
  }
  std::string y = op.kind == OpKind::Sddmm && op.form == SddmmForm::Dot
                      ? "tensor<?x" + t + ">"
                      : x;
  os << " : " << g << ", " << x;
  if (op.kind == OpKind::Sddmm)
    os << ", " << x;
  os << " -> " << y << "\n    gnn.return %y : " << y << "\n  }\n}\n";
  return os.str();
}

graph::GraphProfile test::profileOf(const graph::CsrGraph &g,
                                    const GpuModel &gpu, const OpDesc &op) {
  return graph::analyzeGraph(g, profileOptionsFor(gpu, op));
}

std::vector<Candidate> test::rankedFor(const graph::CsrGraph &g,
                                       const OpDesc &op) {
  GpuModel gpu = sm90();
  return rankSchedules(gpu, profileOf(g, gpu, op), op, enumerateSchedules(op));
}

TunedCompileOptions test::sm90Compile(const std::string &databasePath) {
  TunedCompileOptions options;
  options.arch = "sm_90";
  if (databasePath.empty())
    options.useDatabase = false;
  else
    options.databasePath = databasePath;
  return options;
}

void test::expectKernelSchedule(const CompiledModule &module,
                                const std::string &entry,
                                const Schedule &schedule) {
  Expected<rt::KernelSpec> spec = findKernel(module, entry);
  ASSERT_TRUE(spec) << entry << ": " << spec.message();
  EXPECT_EQ(spec->schedule, schedule) << entry;
}

Prediction test::predictWith(const GpuModel &gpu,
                             const graph::GraphProfile &profile,
                             const OpDesc &op, const Schedule &s) {
  Expected<KernelPlan> plan = planKernel(op, s);
  CostModel model = costModelFor(op.kind);
  EXPECT_TRUE(plan) << s.str() << ": " << plan.message();
  EXPECT_TRUE(model) << opKindName(op.kind);
  if (!plan || !model)
    return {};
  return model(gpu, profile, op, *plan);
}

namespace {

std::string trim(const std::string &t) {
  size_t b = t.find_first_not_of(" \t\n");
  size_t e = t.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
}

/// The fields of the `<...>` body that starts at `ir[begin]`, split at the
/// commas outside nested brackets.
std::map<std::string, std::string> fieldsOfBody(const std::string &ir,
                                                size_t begin) {
  std::map<std::string, std::string> fields;
  int depth = 0;
  std::string item;
  auto flush = [&] {
    size_t eq = item.find('=');
    if (eq != std::string::npos)
      fields[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
    item.clear();
  };
  for (size_t i = begin; i < ir.size(); ++i) {
    char c = ir[i];
    if (c == '<' || c == '[') {
      if (depth++ == 0)
        continue;
    } else if (c == '>' || c == ']') {
      if (--depth == 0) {
        flush();
        break;
      }
    } else if (c == ',' && depth == 1) {
      flush();
      continue;
    }
    item += c;
  }
  return fields;
}

int64_t intField(const std::map<std::string, std::string> &fields,
                 const std::string &key, int64_t otherwise = 0) {
  auto it = fields.find(key);
  return it == fields.end() ? otherwise : std::stoll(it->second);
}

} // namespace

std::map<std::string, std::string>
test::loweredFields(const std::string &ir, const std::string &entry,
                    const std::string &open) {
  size_t at = ir.find("gnn.entry = \"" + entry + "\"");
  if (at == std::string::npos)
    return {};
  size_t start = ir.rfind("gnn.kernel @", at);
  size_t end = ir.find("gnn.kernel @", at);
  std::string kernel = ir.substr(
      start, end == std::string::npos ? std::string::npos : end - start);
  size_t found = kernel.find(open);
  if (found == std::string::npos)
    return {};
  return fieldsOfBody(kernel, found + open.size() - 1);
}

void test::expectPlanMatchesLowering(const OpDesc &op, const KernelPlan &plan,
                                     const rt::KernelSpec &spec,
                                     const std::string &loweredIR) {
  SCOPED_TRACE("kernel " + spec.name + " with " + plan.schedule.str());
  // What the kernel computes and the schedule it runs.
  ASSERT_TRUE(spec.op.has_value());
  EXPECT_TRUE(*spec.op == op) << "the manifest's op is not the one planned";
  EXPECT_EQ(spec.schedule, plan.schedule) << spec.schedule.str();

  // The thread mapping, as the lowering wrote it into #gnn.plan.
  std::map<std::string, std::string> mapping =
      loweredFields(loweredIR, spec.name, "gnn.plan = #gnn.plan<");
  ASSERT_FALSE(mapping.empty()) << "no #gnn.plan for " << spec.name << " in\n"
                                << loweredIR;
  const ThreadMapping &m = plan.mapping;
  EXPECT_EQ(intField(mapping, "lanes", -1), m.lanes);
  EXPECT_EQ(intField(mapping, "rows_per_block", -1), m.rowsPerBlock);
  EXPECT_EQ(intField(mapping, "vector_width", -1), m.vectorWidth);
  EXPECT_EQ(intField(mapping, "chunks", -1), m.chunks);
  EXPECT_EQ(intField(mapping, "chunks_per_lane", -1), m.chunksPerLane);
  EXPECT_EQ(intField(mapping, "edge_unroll", -1), m.edgeUnroll);
  EXPECT_EQ(mapping.count("packed") ? mapping.at("packed") : "false",
            m.packed ? "true" : "false");
  EXPECT_EQ(intField(mapping, "items_per_worker"), m.itemsPerWorker);
  EXPECT_EQ(intField(mapping, "group_size"), m.groupSize);
  EXPECT_EQ(intField(mapping, "row_ends_bytes"), m.rowEndsBytes);
  EXPECT_EQ(intField(mapping, "atomic_piece_edges"), plan.atomicPieceEdges);
  EXPECT_EQ(spec.atomicPieceEdges, plan.atomicPieceEdges);

  // The launch: the manifest's rule, and the register cap in #gnn.launch.
  auto expectLaunch = [](const LaunchPlan &want, const rt::LaunchRule &got) {
    EXPECT_EQ(got.blockX, static_cast<unsigned>(want.threads));
    EXPECT_EQ(got.blockY, 1u);
    EXPECT_EQ(got.blockZ, 1u);
    EXPECT_EQ(got.grid, want.grid);
    EXPECT_EQ(got.itemsPerBlock, static_cast<uint64_t>(want.itemsPerBlock));
    EXPECT_EQ(got.sharedBytes, static_cast<unsigned>(want.sharedBytes));
    EXPECT_EQ(got.minBlocks, static_cast<uint64_t>(want.minBlocks));
  };
  expectLaunch(plan.launch, spec.launch);
  std::map<std::string, std::string> launch =
      loweredFields(loweredIR, spec.name, "gnn.launch = #gnn.launch<");
  ASSERT_FALSE(launch.empty()) << "no #gnn.launch for " << spec.name;
  EXPECT_EQ(intField(launch, "block", -1), plan.launch.threads);
  EXPECT_EQ(intField(launch, "per_block", -1), plan.launch.itemsPerBlock);
  EXPECT_EQ(intField(launch, "shared"), plan.launch.sharedBytes);
  EXPECT_EQ(intField(launch, "min_blocks"), plan.launch.minBlocks);
  EXPECT_EQ(intField(launch, "blocks_per_sm"), plan.launch.blocksPerSm);

  // Companion kernels, named by the entry and the plan's suffix.
  auto expectCompanions = [&](const std::vector<CompanionPlan> &want,
                              const std::vector<rt::FollowUpKernel> &got) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].name, spec.name + want[i].suffix);
      expectLaunch(want[i].launch, got[i].launch);
    }
  };
  expectCompanions(plan.preludes, spec.preludes);
  expectCompanions(plan.followUps, spec.followUps);

  ASSERT_EQ(spec.workspace.has_value(), plan.workspace.has_value());
  if (plan.workspace) {
    EXPECT_EQ(spec.workspace->count, plan.workspace->count);
    EXPECT_EQ(spec.workspace->itemsPerUnit,
              static_cast<uint64_t>(plan.workspace->itemsPerUnit));
    EXPECT_EQ(spec.workspace->bytesPerUnit,
              static_cast<uint64_t>(plan.workspace->bytesPerUnit));
    EXPECT_EQ(spec.workspace->minUnits,
              static_cast<uint64_t>(plan.workspace->minUnits));
  }

  // The parameters beyond the operands come right after the result.
  size_t extras = plan.extraParams.size();
  ASSERT_GT(spec.params.size(), extras);
  std::vector<ParamRole> tail;
  for (size_t i = spec.params.size() - extras; i < spec.params.size(); ++i)
    tail.push_back(spec.params[i].role);
  EXPECT_EQ(tail, plan.extraParams);
  EXPECT_EQ(spec.params[spec.params.size() - extras - 1].role,
            ParamRole::Result);
}

void test::expectModelPlanIsLowered(const OpDesc &op, const Schedule &s) {
  SCOPED_TRACE(s.str());
  Expected<TunableModule> module =
      TunableModule::parse(kernelText(op), "plan.gnn");
  ASSERT_TRUE(module) << module.message();
  ASSERT_EQ(module->sites().size(), 1u);
  ASSERT_TRUE(module->sites()[0].op == op);
  Expected<CompiledModule> compiled = module->compile({{"m_k", s}});
  ASSERT_TRUE(compiled) << compiled.message();
  ASSERT_EQ(compiled->kernels.size(), 1u);
  static const graph::CsrGraph g = graph::generateRmat(6, 8, 1);
  GpuModel gpu = sm90();
  std::vector<Candidate> ranked =
      rankSchedules(gpu, profileOf(g, gpu, op), op, {s});
  ASSERT_EQ(ranked.size(), 1u) << "the model refuses a schedule that compiles";
  expectPlanMatchesLowering(op, ranked[0].prediction.plan, compiled->kernels[0],
                            compiled->loweredIR);
}

void test::expectCompilerAgrees(const OpDesc &op, const Schedule &s,
                                const std::string &reason) {
  SCOPED_TRACE(s.str() + " on " + elementTypeName(op.type) + " width " +
               std::to_string(op.width));
  Expected<KernelPlan> plan = planKernel(op, s);
  Expected<CompiledModule> compiled = compileGnn(kernelText(op, s), "t.gnn");
  if (reason.empty()) {
    EXPECT_TRUE(plan) << plan.message();
    EXPECT_TRUE(compiled) << compiled.message();
    return;
  }
  ASSERT_FALSE(plan) << "the plan accepts it";
  EXPECT_NE(plan.message().find(reason), std::string::npos) << plan.message();
  ASSERT_FALSE(compiled) << "the compiler accepts what the plan refuses";
  EXPECT_NE(compiled.message().find(plan.message()), std::string::npos)
      << compiled.message() << "\nvs the plan's\n"
      << plan.message();
}
