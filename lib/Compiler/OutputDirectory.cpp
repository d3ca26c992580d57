//===- OutputDirectory.cpp - Where gnnc tools write their files -----------===//
#include "gnnc/Compiler/OutputDirectory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
constexpr const char *kStampName = ".gnnc-output";

std::string join(const std::string &dir, const std::string &name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  return std::string(path);
}
} // namespace

gnnc::Expected<gnnc::OutputDirectory>
gnnc::OutputDirectory::open(const std::string &dir, const std::string &tool,
                            bool force) {
  if (std::error_code ec = sys::fs::create_directories(dir))
    return Status::error(dir + ": cannot create directory: " + ec.message());
  bool ours = sys::fs::exists(join(dir, kStampName));
  return OutputDirectory(dir, tool, force, ours);
}

gnnc::Status gnnc::OutputDirectory::write(const std::string &name,
                                          const std::string &contents) {
  std::string path = join(dir_, name);
  if (sys::fs::exists(path) && !ours_ && !force_)
    return Status::error(path + ": refusing to overwrite a file " + tool_ +
                         " did not write (use --force or another -o "
                         "directory)");
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return Status::error(path + ": cannot write: " + ec.message());
  os << contents;
  os.close();
  if (os.has_error())
    return Status::error(path + ": write failed: " + os.error().message());
  return Status::ok();
}

gnnc::Status gnnc::OutputDirectory::finish() {
  if (ours_)
    return Status::ok();
  std::string path = join(dir_, kStampName);
  std::error_code ec;
  raw_fd_ostream stamp(path, ec, sys::fs::OF_None);
  if (ec)
    return Status::error(path + ": cannot write: " + ec.message());
  stamp << "This directory holds files written by gnnc tools; they may "
           "replace them.\n";
  ours_ = true;
  return Status::ok();
}
