//===- LLVMToolSupport.cpp - Failure handling of the LLVM-based tools -----===//
#include "gnnc/Tools/ToolSupport.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/PrettyStackTrace.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

namespace gnnc::tools::detail {
void installCommonHandlers(const char *tool);
const char *reportLine();
} // namespace gnnc::tools::detail

namespace {

const char *llvmToolName = "gnnc";

/// LLVM's own allocations (llvm::safe_malloc) report failure here rather
/// than throwing.
void onLLVMBadAlloc(void *, const char *reason, bool) {
  std::fprintf(stderr,
               "%s: error: out of memory (%s; the input needs more memory "
               "than this machine gives the process)\n",
               llvmToolName, reason ? reason : "allocation failed");
  std::fflush(stderr);
  std::_Exit(1);
}

} // namespace

void gnnc::tools::initLLVMTool(const char *tool) {
  llvmToolName = tool;
  detail::installCommonHandlers(tool);
  // Printed by LLVM's crash handler above its stack dump (whose first lines
  // say what was running: the command line, the op being parsed).
  static const std::string message =
      std::string(tool) + ": internal error (a crash). " + detail::reportLine();
  llvm::setBugReportMsg(message.c_str());
  llvm::install_bad_alloc_error_handler(onLLVMBadAlloc);
  // InitLLVM's new-handler turns every failed allocation into "LLVM ERROR:
  // out of memory" and an abort; without it operator new throws
  // std::bad_alloc, which the graph readers turn into an error naming the
  // file (and onTerminate, elsewhere, into the message above).
  std::set_new_handler(nullptr);
}
