//===- DumpKernels.cpp - Write the CUDA of every test kernel --------------===//
//
// gnnc-dump-kernels [--gnn] DIR writes the CUDA source and the manifest of
// the whole compile sweep (sweep.cu, sweep.manifest.json) and of the
// backward suite (backward.cu, backward.manifest.json) into DIR, so that two
// builds of the compiler can be compared kernel by kernel
// (scripts/emission-snapshot.sh). With --gnn it also writes the gnn text
// they are compiled from (sweep.gnn, backward.gnn), for `gnnc FILE.gnn
// --emit=cubin` to compile them with NVRTC.
//
//===----------------------------------------------------------------------===//
#include "BackwardVariants.h"
#include "SpmmVariants.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/runtime/KernelSpec.h"

#include <cstdio>
#include <fstream>
#include <string>

using namespace gnnc;

static bool dump(const std::string &dir, const std::string &stem,
                 const std::string &text, bool writeGnn) {
  if (writeGnn)
    std::ofstream(dir + "/" + stem + ".gnn") << text;
  auto compiled = compileGnn(text, stem + ".gnn");
  if (!compiled) {
    std::fprintf(stderr, "%s\n", compiled.message().c_str());
    return false;
  }
  std::ofstream(dir + "/" + stem + ".cu") << compiled->source;
  std::ofstream(dir + "/" + stem + ".manifest.json")
      << rt::writeManifest(compiled->kernels, stem + ".cu");
  return true;
}

int main(int argc, char **argv) {
  bool writeGnn = argc == 3 && std::string(argv[1]) == "--gnn";
  if (argc != 2 && !writeGnn) {
    std::fprintf(stderr, "usage: gnnc-dump-kernels [--gnn] DIR\n");
    return 2;
  }
  const char *dir = argv[argc - 1];
  std::vector<test::SpmmVariant> variants = test::allVariants();
  for (const test::SpmmVariant &v : test::compileOnlyVariants())
    variants.push_back(v);
  bool ok = dump(dir, "sweep", test::spmmModuleText(variants), writeGnn);
  ok = dump(dir, "backward", test::backwardSuite().text, writeGnn) && ok;
  return ok ? 0 : 1;
}
