//===- EmissionPatternTest.cpp - The CUDA printer's patterns --------------===//
//
// Every (op, strategy) the kernel plans implement has an emission pattern,
// and every pattern prints the companion kernels its plans list. IR that no
// verifier lets through (a strategy without a pattern) still gets the
// printer's diagnostic rather than a crash; the lit tests of this directory
// cover the refusals that verified IR can reach.
//
//===----------------------------------------------------------------------===//
#include "Patterns/Patterns.h"

#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "gnnc/Target/CUDA/CUDAEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

const OpKind kKinds[] = {OpKind::Spmm, OpKind::Sddmm, OpKind::EdgeSoftmax,
                         OpKind::EdgeSoftmaxGrad, OpKind::SegmentMatmul};
const Strategy kStrategies[] = {
    Strategy::VertexParallel, Strategy::NeighborGroup, Strategy::EdgeParallel,
    Strategy::Sliced,         Strategy::Batched,       Strategy::TileRouted};

bool planned(OpKind kind, Strategy strategy) {
  for (Strategy s : implementedStrategies(kind))
    if (s == strategy)
      return true;
  return false;
}

TEST(EmissionPatterns, OneForEachPlannedStrategyAndNoOther) {
  for (OpKind kind : kKinds)
    for (Strategy strategy : kStrategies)
      EXPECT_EQ(findEmissionPattern(kind, strategy) != nullptr,
                planned(kind, strategy))
          << opKindName(kind) << " with strategy " << strategyName(strategy);
}

TEST(EmissionPatterns, PrintTheCompanionsTheirPlansList) {
  OpDesc spmm;
  spmm.kind = OpKind::Spmm;
  spmm.width = 64;
  spmm.rowStride = 64;
  struct Case {
    Strategy strategy;
    WriteMode write;
  };
  for (Case c : {Case{Strategy::VertexParallel, WriteMode::Direct},
                 Case{Strategy::EdgeParallel, WriteMode::Atomic},
                 Case{Strategy::EdgeParallel, WriteMode::Staged},
                 Case{Strategy::EdgeParallel, WriteMode::Shared},
                 Case{Strategy::NeighborGroup, WriteMode::Atomic}}) {
    Schedule schedule;
    schedule.strategy = c.strategy;
    schedule.write = c.write;
    Expected<KernelPlan> plan = planWithDefaults(spmm, schedule);
    ASSERT_TRUE(plan) << schedule.str() << ": " << plan.message();
    const EmissionPattern *pattern = findEmissionPattern(spmm.kind, c.strategy);
    ASSERT_TRUE(pattern);
    EXPECT_LE(plan->preludes.size(), pattern->numPreludes()) << schedule.str();
    EXPECT_LE(plan->followUps.size(), pattern->numFollowUps())
        << schedule.str();
  }
}

TEST(CUDAEmitter, ReportsAScheduleItCannotPlan) {
  // Lowered IR whose schedule no verifier accepts (sliced over a graph that
  // is no snapshot group), parsed without verification: the emitter plans
  // the op again and reports why it cannot.
  const char *text = R"mlir(
gnn.module @m {
  gnn.kernel @agg(%g: !gnn.graph<csr, i64, i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {gnn.abi = [#gnn.param<"row_ptr", row_offsets>, #gnn.param<"col_idx", column_indices>, #gnn.param<"num_rows", num_rows>, #gnn.param<"x", input>, #gnn.param<"y", result>], gnn.entry = "m_agg", gnn.launch = #gnn.launch<block = 64, grid = [num_rows], per_block = 64>} {
    %y = gnn.spmm %g, %x {gnn.plan = #gnn.plan<lanes = 1, rows_per_block = 64, vector_width = 4, chunks = 1, chunks_per_lane = 1, edge_unroll = 8>, schedule = #gnn.schedule<strategy = sliced, vector_width = 4, dim_workers = 1, threads_per_block = 64, slice_size = 32>} : !gnn.graph<csr, i64, i32>, tensor<?x4xf32> -> tensor<?x4xf32>
    gnn.return %y : tensor<?x4xf32>
  }
}
)mlir";
  mlir::MLIRContext context;
  context.loadDialect<gnn::GnnDialect>();
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config);
  ASSERT_TRUE(module);

  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return mlir::success();
  });
  std::string cuda;
  llvm::raw_string_ostream os(cuda);
  EXPECT_TRUE(mlir::failed(translateToCUDA(*module, os)));
  EXPECT_EQ(diagnostics,
            "'gnn.spmm' op strategy = sliced aggregates a group of snapshots "
            "at once; the graph must be a !gnn.graph<snapshot_csr, ...>\n");
  EXPECT_TRUE(cuda.empty()) << cuda;
}

} // namespace
