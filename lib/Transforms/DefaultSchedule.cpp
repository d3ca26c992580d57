//===- DefaultSchedule.cpp - Fill in schedule parameters ------------------===//
//
// Gives every op a complete schedule: what it leaves at 0 is chosen by the
// op's kernel plans (gnnc::completeSchedule): simple rules, not tuning.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Transforms/Passes.h"

namespace gnnc {
#define GEN_PASS_DEF_GNNDEFAULTSCHEDULE
#include "gnnc/Transforms/Passes.h.inc"
} // namespace gnnc

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

namespace gnnc {
namespace {
struct GnnDefaultSchedulePass
    : public impl::GnnDefaultScheduleBase<GnnDefaultSchedulePass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](ScheduledOpInterface op) {
      ScheduleAttr given = op.getScheduleAttr();
      OpDesc desc = op.describe();
      Expected<Schedule> complete = completeSchedule(
          desc, given ? given.getValue() : defaultSchedule(desc));
      if (!complete) {
        op->emitOpError() << complete.message();
        return WalkResult::interrupt();
      }
      op.setScheduleAttr(ScheduleAttr::get(op->getContext(), *complete));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace gnnc
