//===- TuningTestUtil.h - Helpers of the tuner's tests ----------*- C++ -*-===//
//
// Ops, schedules, graphs and .gnn text for the tuner's tests, and the one
// comparison of a kernel plan (what the cost models predict with) against
// what the real lowering recorded for a compiled kernel.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TEST_TUNING_TUNINGTESTUTIL_H
#define GNNC_TEST_TUNING_TUNINGTESTUTIL_H

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Tuning/Autotuner.h"
#include "gnnc/Tuning/CostModel.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/graph/Analysis.h"
#include "gnnc/graph/Csr.h"

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gnnc {
// How gtest prints the values of failed expectations.
inline void PrintTo(const Schedule &s, std::ostream *os) { *os << s.str(); }
inline void PrintTo(Strategy s, std::ostream *os) { *os << strategyName(s); }
inline void PrintTo(WriteMode w, std::ostream *os) { *os << writeModeName(w); }
inline void PrintTo(Accumulate a, std::ostream *os) {
  *os << accumulateName(a);
}
inline void PrintTo(ParamRole r, std::ostream *os) { *os << paramRoleName(r); }
} // namespace gnnc

namespace gnnc::tuning::test {

/// The built-in sm_90 model.
GpuModel sm90();

/// Row 0 points to every column; every other row has one neighbour.
graph::CsrGraph starGraph(int64_t n);

/// `n` rows of `degree` neighbours each, spread over the columns.
graph::CsrGraph uniformGraph(int64_t n, int64_t degree);

/// A file name under the test's temporary directory, unique to this process.
std::string tempPath(const std::string &name);

/// Complete schedules of each strategy.
Schedule vertexSchedule(int32_t vw, int32_t dw, int32_t tpb, int32_t bps = 0);
Schedule edgeSchedule(int32_t vw, int32_t dw, int32_t tpb, int32_t items,
                      WriteMode write = WriteMode::Staged, int32_t bps = 0);
Schedule groupSchedule(int32_t vw, int32_t dw, int32_t tpb, int32_t group);

/// A gnn.spmm (sum) of `type` features of `width` (rows of `stride`
/// elements when > 0) on a graph with 64-bit offsets and 32-bit indices.
OpDesc spmmProblem(ElementType type = ElementType::F32, int64_t width = 64,
                   bool values = false, int64_t stride = 0);
/// A gnn.sddmm of `type` features of `width`: dot, or add; with a
/// leaky_relu of 0.2 (as an f32 attribute) when `leakyRelu`.
OpDesc sddmmOp(ElementType type, int64_t width, bool add = false,
               bool leakyRelu = false);

/// A one-kernel module `@m` whose kernel `@k` (entry `m_k`) holds the
/// gnn.spmm or gnn.sddmm `op`, with `schedule` when given.
std::string kernelText(const OpDesc &op,
                       const std::optional<Schedule> &schedule = {});

graph::GraphProfile profileOf(const graph::CsrGraph &g, const GpuModel &gpu,
                              const OpDesc &op);

/// Every enumerated schedule of `op`, ranked by the sm_90 model on `g`.
std::vector<Candidate> rankedFor(const graph::CsrGraph &g, const OpDesc &op);

/// compileForGraph's options for sm_90 with the tuning database at
/// `databasePath`, or without a database when it is empty.
TunedCompileOptions sm90Compile(const std::string &databasePath = "");

/// Checks that `module` holds the kernel `entry`, compiled with `schedule`.
void expectKernelSchedule(const CompiledModule &module,
                          const std::string &entry, const Schedule &schedule);

/// The prediction of `op` under `s` by the op's cost model (costModelFor);
/// fails the test (and returns an empty prediction) when planKernel refuses
/// `s` or no model knows the op.
Prediction predictWith(const GpuModel &gpu, const graph::GraphProfile &profile,
                       const OpDesc &op, const Schedule &s);

/// The `key = value` fields of the attribute that starts with `open` (e.g.
/// "gnn.plan = #gnn.plan<") inside the kernel `entry` of the lowered IR;
/// empty when there is none.
std::map<std::string, std::string> loweredFields(const std::string &ir,
                                                 const std::string &entry,
                                                 const std::string &open);

/// Checks (with gtest EXPECTs) that `plan`, the plan of `op` that the cost
/// models predict with, is what the lowering recorded for `spec`: the
/// thread mapping (`#gnn.plan` in `loweredIR`), the launch (the manifest's
/// launch rule, and `#gnn.launch`'s blocks_per_sm), the preludes and
/// follow-ups, the workspace, the parameters beyond the operands, the
/// atomic piece size, the schedule and the op itself.
void expectPlanMatchesLowering(const OpDesc &op, const KernelPlan &plan,
                               const rt::KernelSpec &spec,
                               const std::string &loweredIR);

/// Compiles the one-kernel module of `op` (kernelText) with `s` through a
/// TunableModule and checks that the plan the cost model ranks `s` with
/// (rankSchedules' Prediction::plan) is what the lowering recorded.
void expectModelPlanIsLowered(const OpDesc &op, const Schedule &s);

/// Checks that planKernel's verdict on `s` for `op` is compileGnn's: both
/// accept it (`reason` empty), or both refuse it, the plan's reason
/// contains `reason` and the compiler's diagnostic carries the plan's
/// reason.
void expectCompilerAgrees(const OpDesc &op, const Schedule &s,
                          const std::string &reason);

} // namespace gnnc::tuning::test

#endif // GNNC_TEST_TUNING_TUNINGTESTUTIL_H
