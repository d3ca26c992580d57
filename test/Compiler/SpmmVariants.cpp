//===- SpmmVariants.cpp - Generated gnn.spmm kernels for tests ------------===//
#include "SpmmVariants.h"

#include <sstream>

using namespace gnnc::test;

std::string SpmmVariant::kernelName() const {
  std::string name = op + "_" + type + "_w" + std::to_string(width) +
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

std::vector<SpmmVariant> gnnc::test::allSddmmVariants() {
  std::vector<SpmmVariant> variants;
  for (const char *op : {"sddmm_dot", "sddmm_add"})
    for (const char *type : {"f32", "f16", "bf16"})
      for (int64_t width : {1, 3, 16, 32, 41, 64, 128, 256})
        for (bool leaky : {false, true}) {
          SpmmVariant v{type, width, leaky, "i64", "", op};
          variants.push_back(v);
          v.schedule = "vector_width = 1, dim_workers = 32, "
                       "threads_per_block = 128";
          variants.push_back(v);
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
    std::string sched = v.schedule.empty()
                            ? ""
                            : "schedule = #gnn.schedule<" + v.schedule + ">";
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
    if (!sched.empty())
      os << " {" << sched << "}";
    os << " : " << graph << ", " << x << " -> " << x << "\n";
    os << "    gnn.return %y : " << x << "\n  }\n";
  }
  os << "}\n";
  return os.str();
}
