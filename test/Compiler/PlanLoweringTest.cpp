//===- PlanLoweringTest.cpp - The lowering records the kernel plans -------===//
//
// Runs the real lowering and printer on every kernel of the compile sweep
// and the backward suite and checks that each kernel description carries
// exactly the plan gnnc::planKernel computes for its op and schedule: the
// launch, the companion kernels, the workspace and the roles of the
// parameters the plan adds. The cost models and the benchmark plan with the
// same function, so what they assume is what runs. Needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "BackwardVariants.h"
#include "SpmmVariants.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Plan.h"

#include <gtest/gtest.h>

using namespace gnnc;

namespace {

/// Checks one launch rule against its plan.
void expectLaunch(const rt::LaunchRule &rule, const LaunchPlan &plan,
                  const std::string &what) {
  EXPECT_EQ(rule.blockX, static_cast<unsigned>(plan.threads)) << what;
  EXPECT_EQ(rule.grid, plan.grid) << what;
  EXPECT_EQ(rule.itemsPerBlock, static_cast<uint64_t>(plan.itemsPerBlock))
      << what;
  EXPECT_EQ(rule.sharedBytes, static_cast<unsigned>(plan.sharedBytes)) << what;
  EXPECT_EQ(rule.minBlocks, static_cast<uint64_t>(plan.minBlocks)) << what;
}

/// Checks one kernel description against the plan of its op and schedule.
void checkKernel(const rt::KernelSpec &spec) {
  {
    SCOPED_TRACE(spec.name + " " + spec.schedule.str());
    ASSERT_TRUE(spec.op);
    Expected<KernelPlan> plan = planKernel(*spec.op, spec.schedule);
    ASSERT_TRUE(plan) << plan.message();
    expectLaunch(spec.launch, plan->launch, "launch");
    ASSERT_EQ(spec.preludes.size(), plan->preludes.size());
    for (size_t i = 0; i < spec.preludes.size(); ++i) {
      EXPECT_EQ(spec.preludes[i].name, spec.name + plan->preludes[i].suffix);
      expectLaunch(spec.preludes[i].launch, plan->preludes[i].launch,
                   "prelude");
    }
    ASSERT_EQ(spec.followUps.size(), plan->followUps.size());
    for (size_t i = 0; i < spec.followUps.size(); ++i) {
      EXPECT_EQ(spec.followUps[i].name, spec.name + plan->followUps[i].suffix);
      expectLaunch(spec.followUps[i].launch, plan->followUps[i].launch,
                   "follow-up");
    }
    ASSERT_EQ(spec.workspace.has_value(), plan->workspace.has_value());
    if (spec.workspace) {
      EXPECT_EQ(spec.workspace->count, plan->workspace->count);
      EXPECT_EQ(spec.workspace->itemsPerUnit,
                static_cast<uint64_t>(plan->workspace->itemsPerUnit));
      EXPECT_EQ(spec.workspace->bytesPerUnit,
                static_cast<uint64_t>(plan->workspace->bytesPerUnit));
      EXPECT_EQ(spec.workspace->minUnits,
                static_cast<uint64_t>(plan->workspace->minUnits));
    }
    EXPECT_EQ(spec.atomicPieceEdges, plan->atomicPieceEdges);
    // The parameters the plan adds come last, in its order.
    ASSERT_GE(spec.params.size(), plan->extraParams.size());
    size_t first = spec.params.size() - plan->extraParams.size();
    for (size_t i = 0; i < plan->extraParams.size(); ++i)
      EXPECT_EQ(spec.params[first + i].role, plan->extraParams[i]);
    // Every input and the result have their roles.
    EXPECT_NE(spec.findRole(ParamRole::Result), nullptr);
    EXPECT_NE(spec.findRole(ParamRole::Input, 0), nullptr);
    EXPECT_NE(spec.findRole(ParamRole::RowOffsets), nullptr);
  }
}

/// Checks every kernel of `text` against its plan; returns how many.
size_t checkModule(const std::string &text, const std::string &name) {
  Expected<CompiledModule> compiled = compileGnn(text, name);
  EXPECT_TRUE(compiled) << compiled.message();
  if (!compiled)
    return 0;
  for (const rt::KernelSpec &spec : compiled->kernels)
    checkKernel(spec);
  return compiled->kernels.size();
}

TEST(PlanLowering, EveryVariantCarriesItsPlan) {
  std::vector<test::SpmmVariant> all = test::allVariants();
  for (const test::SpmmVariant &v : test::compileOnlyVariants())
    all.push_back(v);
  // In modules of a few hundred kernels (one module of all of them needs
  // gigabytes).
  size_t checked = 0;
  for (size_t begin = 0; begin < all.size(); begin += 200) {
    std::vector<test::SpmmVariant> part(
        all.begin() + begin,
        all.begin() + std::min(all.size(), begin + size_t(200)));
    checked += checkModule(test::spmmModuleText(part), "sweep.gnn");
  }
  EXPECT_EQ(checked, all.size());
  test::BackwardSuite backward = test::backwardSuite();
  EXPECT_EQ(checkModule(backward.text, "backward.gnn"),
            backward.kernels.size());
}

} // namespace
