//===- BackwardVariants.cpp - Generated backward kernels for tests --------===//
#include "BackwardVariants.h"

#include <sstream>

using namespace gnnc;
using namespace gnnc::test;

static const char *kScalarSchedule =
    "vector_width = 1, dim_workers = 8, threads_per_block = 128";

BackwardSuite gnnc::test::backwardSuite() {
  BackwardSuite suite;
  std::ostringstream os;
  os << "gnn.module @bw {\n";
  const ElementType types[] = {ElementType::F32, ElementType::F16,
                               ElementType::BF16};
  for (ElementType type : types) {
    std::string t = elementTypeName(type);
    // gnn.edge_softmax_grad.
    for (int64_t heads : {1, 3, 8, 64})
      for (const char *offsets : {"i64", "i32"})
        for (bool scalar : {false, true}) {
          if (std::string(offsets) == "i32" && (heads != 8 || scalar))
            continue;
          BackwardKernel k;
          k.kind = BackwardKernel::SoftmaxGrad;
          k.name = "softmax_grad_" + t + "_h" + std::to_string(heads) + "_" +
                   offsets + (scalar ? "_scalar" : "");
          std::string graph =
              std::string("!gnn.graph<csr, ") + offsets + ", i32>";
          std::string ty =
              heads == 1 ? "tensor<?x" + t + ">"
                         : "tensor<?x" + std::to_string(heads) + "x" + t + ">";
          os << "  gnn.kernel @" << k.name << "(%g: " << graph << ", %a: " << ty
             << ", %da: " << ty << ") -> " << ty << " {\n";
          os << "    %dx = gnn.edge_softmax_grad %g, %a, %da";
          if (scalar)
            os << " {schedule = #gnn.schedule<" << kScalarSchedule << ">}";
          os << " : " << graph << ", " << ty << ", " << ty << " -> " << ty
             << "\n";
          os << "    gnn.return %dx : " << ty << "\n  }\n";
          suite.kernels.push_back(k);
        }
    // The feature gradient of gnn.spmm.
    const std::pair<gnnc::Reduce, gnnc::DegreeScale> forwards[] = {
        {gnnc::Reduce::Sum, gnnc::DegreeScale::None},
        {gnnc::Reduce::Mean, gnnc::DegreeScale::None},
        {gnnc::Reduce::Sum, gnnc::DegreeScale::Left},
        {gnnc::Reduce::Sum, gnnc::DegreeScale::Right},
        {gnnc::Reduce::Sum, gnnc::DegreeScale::Both},
        {gnnc::Reduce::Mean, gnnc::DegreeScale::Left},
        {gnnc::Reduce::Mean, gnnc::DegreeScale::Both}};
    for (auto [reduce, scale] : forwards)
      for (int64_t width : {1, 3, 64})
        for (bool values : {false, true}) {
          BackwardKernel k;
          k.kind = BackwardKernel::SpmmFeatures;
          k.reduce = reduce;
          k.scale = scale;
          k.name = "spmm_dx_" + t + "_w" + std::to_string(width) +
                   (values ? "_ve" : "_v") + "_r" +
                   std::to_string(static_cast<int>(reduce)) + "_s" +
                   std::to_string(static_cast<int>(scale));
          bool edge = width == 64 && values && reduce == gnnc::Reduce::Mean;
          std::vector<std::string> schedules = {""};
          if (edge)
            schedules.push_back(
                "strategy = edge_parallel, edges_per_warp = 64");
          for (const std::string &schedule : schedules) {
            BackwardKernel v = k;
            if (!schedule.empty())
              v.name += "_ep";
            auto text = ops::spmmFeatureGradKernelText(v.name, type, width,
                                                       values, reduce, scale,
                                                       "i64", "i32", schedule);
            os << (text ? *text : "// " + text.message() + "\n");
            suite.kernels.push_back(v);
          }
        }
    for (int64_t width : {1, 3, 64}) {
      std::string graph = "!gnn.graph<csr, i64, i32>";
      std::string x = "tensor<?x" + std::to_string(width) + "x" + t + ">";
      std::string w = "tensor<?x" + t + ">";
      // The edge-value gradient of gnn.spmm: a dot-form gnn.sddmm.
      BackwardKernel dw;
      dw.kind = BackwardKernel::SpmmValues;
      dw.name = "spmm_dw_" + t + "_w" + std::to_string(width);
      os << "  gnn.kernel @" << dw.name << "(%g: " << graph << ", %dy: " << x
         << ", %x: " << x << ") -> " << w << " {\n";
      os << "    %dw = gnn.sddmm %g, %dy, %x : " << graph << ", " << x << ", "
         << x << " -> " << w << "\n";
      os << "    gnn.return %dw : " << w << "\n  }\n";
      suite.kernels.push_back(dw);
      // The gradients of gnn.sddmm: plain gnn.spmm, with edge values (dot
      // form) or without (add form).
      for (bool dot : {true, false}) {
        BackwardKernel k;
        k.kind = dot ? BackwardKernel::SddmmDot : BackwardKernel::SddmmAdd;
        k.name = std::string(dot ? "sddmm_dot_grad_" : "sddmm_add_grad_") + t +
                 "_w" + std::to_string(width);
        os << "  gnn.kernel @" << k.name << "(%g: " << graph << ", %x: " << x
           << (dot ? ", %w: " + w : std::string()) << ") -> " << x << " {\n";
        os << "    %y = gnn.spmm %g, %x"
           << (dot ? " values(%w : " + w + ")" : std::string()) << " : "
           << graph << ", " << x << " -> " << x << "\n";
        os << "    gnn.return %y : " << x << "\n  }\n";
        suite.kernels.push_back(k);
      }
    }
  }
  os << "}\n";
  suite.text = os.str();
  return suite;
}
