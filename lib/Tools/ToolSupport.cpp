//===- ToolSupport.cpp - What every gnnc tool does on a failure -----------===//
//
// Plain C++ (gnn-graph has no LLVM): the out-of-memory, uncaught-exception
// and crash-signal handlers.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tools/ToolSupport.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <unistd.h>

#ifndef GNNC_BUG_REPORT_URL
#define GNNC_BUG_REPORT_URL ""
#endif

namespace {

/// The tool's name, for the handlers.
const char *toolName = "gnnc";
/// Whether LLVM's crash handler reports an abort (with the report line and
/// a stack dump): then onTerminate says only what was thrown.
bool llvmReportsAborts = false;
/// "<tool>: internal error: " and the report line, composed before any
/// failure (a signal handler may not allocate).
char signalPrefix[128];
char reportLine[512];

void writeString(const char *s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t written = ::write(STDERR_FILENO, s, n);
    if (written <= 0)
      return;
    s += written;
    n -= static_cast<size_t>(written);
  }
}

[[noreturn]] void onTerminate() {
  std::string what = "std::terminate was called";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc &) {
      std::fprintf(stderr,
                   "%s: error: out of memory (the input needs more memory "
                   "than this machine gives the process)\n",
                   toolName);
      std::fflush(stderr);
      std::_Exit(1);
    } catch (const std::exception &x) {
      what = std::string("uncaught exception: ") + x.what();
    } catch (...) {
      what = "uncaught exception of an unknown type";
    }
  }
  std::fprintf(stderr, "%s: internal error: %s\n%s", toolName, what.c_str(),
               llvmReportsAborts ? "" : reportLine);
  std::fflush(stderr);
  // (Our own SIGABRT handler would say it again.)
  if (!llvmReportsAborts)
    std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

extern "C" void onCrashSignal(int sig) {
  writeString(signalPrefix);
  const char *name = sig == SIGSEGV   ? "segmentation fault"
                     : sig == SIGBUS  ? "bus error"
                     : sig == SIGFPE  ? "arithmetic exception"
                     : sig == SIGILL  ? "illegal instruction"
                     : sig == SIGABRT ? "aborted"
                                      : "fatal signal";
  writeString(name);
  writeString("\n");
  writeString(reportLine);
  // The default action (a core dump, the exit status of the signal).
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void setTool(const char *tool) {
  toolName = tool;
  std::snprintf(signalPrefix, sizeof(signalPrefix),
                "%s: internal error: ", tool);
  std::snprintf(reportLine, sizeof(reportLine),
                "This is a bug in %s, not a problem of the input: please "
                "report it to %s with the input files and the command "
                "line.\n",
                tool, gnnc::tools::bugReportAddress());
}

void installCommonHandlers(const char *tool) {
  setTool(tool);
  std::set_terminate(onTerminate);
}

} // namespace

const char *gnnc::tools::bugReportAddress() {
  static const char *address =
      *GNNC_BUG_REPORT_URL ? GNNC_BUG_REPORT_URL : "the gnnc developers";
  return address;
}

void gnnc::tools::installFailureHandlers(const char *tool) {
  installCommonHandlers(tool);
  // The handler runs on a stack of its own: a stack overflow is one of the
  // crashes it reports.
  static char altStack[64 * 1024];
  stack_t ss = {};
  ss.ss_sp = altStack;
  ss.ss_size = sizeof(altStack);
  ::sigaltstack(&ss, nullptr);
  struct sigaction action = {};
  action.sa_handler = onCrashSignal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    ::sigaction(sig, &action, nullptr);
}

namespace gnnc::tools::detail {
/// For initLLVMTool (LLVMToolSupport.cpp): the handlers both kinds of tool
/// share, and the report line.
void installCommonHandlers(const char *tool) {
  ::installCommonHandlers(tool);
  llvmReportsAborts = true;
}
const char *reportLine() { return ::reportLine; }
} // namespace gnnc::tools::detail
