//===- OutputDirectory.h - Where gnnc tools write their files ---*- C++ -*-===//
//
// The one policy of every gnnc tool that writes files: nothing a user owns
// is overwritten. A tool creates its output directory if needed and leaves a
// `.gnnc-output` stamp there; files in a directory without the stamp are
// replaced only with --force.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_COMPILER_OUTPUTDIRECTORY_H
#define GNNC_COMPILER_OUTPUTDIRECTORY_H

#include "gnnc/runtime/Status.h"

#include <string>

namespace gnnc {

class OutputDirectory {
public:
  /// Creates `dir` (and its parents) if needed. `tool` names the writer in
  /// messages; `force` allows replacing files gnnc tools did not write.
  static Expected<OutputDirectory> open(const std::string &dir,
                                        const std::string &tool, bool force);

  /// Writes `contents` to dir/name, refusing to replace a file that a gnnc
  /// tool did not write.
  Status write(const std::string &name, const std::string &contents);

  /// Stamps the directory as gnnc's. Call once every write has succeeded:
  /// a stamp left after a refused write would let the next run replace the
  /// user's file.
  Status finish();

  const std::string &path() const { return dir_; }

private:
  OutputDirectory(std::string dir, std::string tool, bool force, bool ours)
      : dir_(std::move(dir)), tool_(std::move(tool)), force_(force),
        ours_(ours) {}

  std::string dir_;
  std::string tool_;
  bool force_;
  /// The stamp was there when the directory was opened.
  bool ours_;
};

} // namespace gnnc

#endif // GNNC_COMPILER_OUTPUTDIRECTORY_H
