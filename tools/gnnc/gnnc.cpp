//===- gnnc.cpp - The gnnc command-line compiler --------------------------===//
//
// gnnc file.gnn [-o DIR] [--emit=cuda|ptx|cubin|mlir] [--arch=sm_XX]
//
// Writes DIR/<stem>.cu and DIR/<stem>.manifest.json (and, for ptx/cubin,
// DIR/<stem>.ptx or DIR/<stem>.cubin compiled with NVRTC, which needs no
// GPU). Files in DIR are replaced only if gnnc wrote them before (it leaves
// a `.gnnc-output` stamp there) or with --force.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Compiler/OutputDirectory.h"
#include "gnnc/Tools/ToolSupport.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Nvrtc.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

enum class Emit { Cuda, Ptx, Cubin, Mlir };

cl::OptionCategory category("gnnc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.gnn>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string>
    outputDir("o",
              cl::desc("Output directory (default: <stem>-gnnc in the current "
                       "directory); '-' prints the CUDA source to stdout"),
              cl::value_desc("dir"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Cuda),
    cl::values(
        clEnumValN(Emit::Cuda, "cuda",
                   "CUDA C++ source and manifest (default)"),
        clEnumValN(Emit::Ptx, "ptx", "also PTX, compiled with NVRTC"),
        clEnumValN(Emit::Cubin, "cubin", "also a cubin, compiled with NVRTC"),
        clEnumValN(Emit::Mlir, "mlir", "print the lowered IR to stdout")),
    cl::cat(category));
cl::opt<std::string> arch("arch",
                          cl::desc("GPU architecture for --emit=ptx|cubin"),
                          cl::value_desc("sm_XX"), cl::init("sm_90"),
                          cl::cat(category));
cl::opt<bool> force("force",
                    cl::desc("Replace files in the output directory even if "
                             "gnnc did not write them"),
                    cl::cat(category));

int fail(const std::string &message) {
  errs() << "gnnc: error: " << message << "\n";
  return 1;
}

/// Checks that `arch` reads sm_XX or sm_XXa with XX >= 50.
bool isValidArch(StringRef a) {
  if (!a.consume_front("sm_"))
    return false;
  a.consume_back("a");
  unsigned value;
  return !a.getAsInteger(10, value) && value >= 50 && value < 1000;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  gnnc::tools::initLLVMTool("gnnc");
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "gnnc: compile gnn dialect kernels (.gnn) to CUDA\n\n"
      "  gnnc spmm.gnn                      writes spmm-gnnc/spmm.cu and "
      "spmm-gnnc/spmm.manifest.json\n"
      "  gnnc spmm.gnn -o out --emit=cubin  also compiles out/spmm.cubin for "
      "sm_90 (no GPU needed)\n"
      "  gnnc spmm.gnn -o -                 prints the CUDA source\n"
      "  gnnc spmm.gnn --emit=mlir          prints the lowered IR\n\n"
      "The manifest lists each kernel's entry name, parameters (in launch "
      "order) and launch rule: blocks = ceil(<grid parameter> / "
      "items_per_block).\n");

  if ((emit == Emit::Ptx || emit == Emit::Cubin) && !isValidArch(arch))
    return fail("--arch=" + arch + ": expected sm_XX (e.g. sm_80, sm_90)");

  gnnc::Expected<gnnc::CompiledModule> compiled =
      gnnc::compileGnnFile(inputFile);
  if (!compiled) {
    errs() << compiled.message() << "\n";
    return 1;
  }
  if (emit == Emit::Mlir) {
    outs() << compiled->loweredIR;
    return 0;
  }
  if (outputDir == "-") {
    outs() << compiled->source;
    return 0;
  }

  std::string stem = sys::path::stem(inputFile).str();
  std::string dir = outputDir.empty() ? stem + "-gnnc" : outputDir.getValue();
  auto outDir = gnnc::OutputDirectory::open(dir, "gnnc", force);
  if (!outDir)
    return fail(outDir.message());

  std::string cuName = stem + ".cu";
  std::string binaryName;
  std::string binary;
  if (emit == Emit::Ptx || emit == Emit::Cubin) {
    gnnc::rt::CompileOptions options;
    options.arch = arch;
    options.ptx = emit == Emit::Ptx;
    auto kernel = gnnc::rt::compileCuda(compiled->source, cuName, options);
    if (!kernel)
      return fail("NVRTC failed for " + inputFile + ": " + kernel.message());
    binary = kernel->binary;
    binaryName = stem + (options.ptx ? ".ptx" : ".cubin");
  }

  std::string manifest = gnnc::rt::writeManifest(compiled->kernels, cuName);
  struct Output {
    std::string name;
    const std::string *contents;
  };
  std::vector<Output> outputs = {{cuName, &compiled->source},
                                 {stem + ".manifest.json", &manifest}};
  if (!binaryName.empty())
    outputs.push_back({binaryName, &binary});
  for (const Output &out : outputs) {
    gnnc::Status status = outDir->write(out.name, *out.contents);
    if (!status)
      return fail(status.message());
  }
  if (gnnc::Status status = outDir->finish(); !status)
    return fail(status.message());
  for (const Output &out : outputs)
    outs() << dir << "/" << out.name << "\n";
  return 0;
}
