//===- ToolSupport.h - What every gnnc tool does on a failure --*- C++ -*-===//
//
// gnnc's promise: bad input gets a clear error, never a crash. The readers,
// the parser and the plans return errors; these handlers cover what slips
// past them, so that no tool ends in an unexplained abort or in LLVM's
// "PLEASE submit a bug report to LLVM" banner:
//  - an allocation that fails outside a reader (which names its file)
//    prints "<tool>: error: out of memory ..." and exits with status 1;
//  - any other uncaught exception, and a crash, print "<tool>: internal
//    error: ...", what failed and where to report it, then abort.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_TOOLS_TOOLSUPPORT_H
#define GNNC_TOOLS_TOOLSUPPORT_H

namespace gnnc::tools {

/// Where to report a crash: GNNC_BUG_REPORT_URL at configure time, or "the
/// gnnc developers".
const char *bugReportAddress();

/// For the tools without LLVM's signal handling (gnn-graph, gnn-bench):
/// installs the out-of-memory and uncaught-exception handlers, and a
/// handler of crash signals that prints "<tool>: internal error: <signal>"
/// and where to report it before the signal takes its default course.
void installFailureHandlers(const char *tool);

/// For the tools built on LLVM (gnnc, gnn-opt, gnn-tune), after
/// llvm::InitLLVM: the same out-of-memory and uncaught-exception handlers;
/// LLVM's bug-report banner becomes gnnc's ("<tool>: internal error (a
/// crash); please report it to ..."), above LLVM's stack dump of what was
/// running; and a failed allocation throws std::bad_alloc again (InitLLVM
/// makes it abort with "LLVM ERROR: out of memory"), so that a graph reader
/// reports it as an error naming its file.
void initLLVMTool(const char *tool);

} // namespace gnnc::tools

#endif // GNNC_TOOLS_TOOLSUPPORT_H
