//===- SpmmVariants.cpp - Generated gnn.spmm kernels for tests ------------===//
#include "SpmmVariants.h"

#include <sstream>

using namespace gnnc::test;

std::string SpmmVariant::kernelName() const {
  std::string name = type + "_w" + std::to_string(width) +
                     (values ? "_ve" : "_v") + "_" + offsets;
  if (!schedule.empty())
    name += "_scalar";
  return name;
}

std::vector<SpmmVariant> gnnc::test::allSpmmVariants() {
  std::vector<SpmmVariant> variants;
  for (const char *type : {"f32", "f16", "bf16"})
    for (int64_t width : {1, 3, 16, 32, 41, 64, 128, 256})
      for (bool values : {false, true}) {
        variants.push_back({type, width, values, "i64", ""});
        variants.push_back({type, width, values, "i64",
                            "vector_width = 1, dim_workers = 32, "
                            "threads_per_block = 128"});
        if (width == 41 || width == 64)
          variants.push_back({type, width, values, "i32", ""});
      }
  return variants;
}

std::string
gnnc::test::spmmModuleText(const std::vector<SpmmVariant> &variants) {
  std::ostringstream os;
  os << "gnn.module @t {\n";
  for (const SpmmVariant &v : variants) {
    std::string graph = "!gnn.graph<csr, " + v.offsets + ", i32>";
    std::string x = "tensor<?x" + std::to_string(v.width) + "x" + v.type + ">";
    std::string w = "tensor<?x" + v.type + ">";
    os << "  gnn.kernel @" << v.kernelName() << "(%g: " << graph
       << ", %x: " << x;
    if (v.values)
      os << ", %w: " << w;
    os << ") -> " << x << " {\n";
    os << "    %y = gnn.spmm %g, %x";
    if (v.values)
      os << " values(%w : " << w << ")";
    if (!v.schedule.empty())
      os << " {schedule = #gnn.schedule<" << v.schedule << ">}";
    os << " : " << graph << ", " << x << " -> " << x << "\n";
    os << "    gnn.return %y : " << x << "\n  }\n";
  }
  os << "}\n";
  return os.str();
}
