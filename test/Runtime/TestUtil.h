//===- TestUtil.h - Helpers for the runtime tests ---------------*- C++ -*-===//
#ifndef GNNC_TEST_RUNTIME_TESTUTIL_H
#define GNNC_TEST_RUNTIME_TESTUTIL_H

#include "gnnc/runtime/KernelSpec.h"

#include <string>

namespace gnnc::test {

/// A fresh directory under /tmp, removed with its contents on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// A saxpy kernel, y[i] = a * x[i] + y[i] for i < n, named `name`.
std::string saxpySource(const std::string &name = "saxpy");

/// The description of saxpySource(name): parameters x, y (pointers), a (f32)
/// and n (i64), one thread per element in blocks of `blockSize`.
rt::KernelSpec saxpySpec(const std::string &name = "saxpy",
                         unsigned blockSize = 256);

std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &data);

} // namespace gnnc::test

#endif // GNNC_TEST_RUNTIME_TESTUTIL_H
