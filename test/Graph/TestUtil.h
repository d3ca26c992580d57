//===- TestUtil.h - Helpers for the graph tests -----------------*- C++ -*-===//
#ifndef GNNC_TEST_GRAPH_TESTUTIL_H
#define GNNC_TEST_GRAPH_TESTUTIL_H

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <zlib.h>

namespace gnnc::test {

/// A fresh temporary directory per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "gnnc-graph-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    char *made = mkdtemp(buf.data());
    dir = made ? made : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    if (dir != "/tmp")
      std::filesystem::remove_all(dir, ec);
  }
  /// Writes `content` to `name` in the directory and returns the path.
  std::string write(const std::string &name, const std::string &content) const {
    std::string path = dir + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out << content;
    return path;
  }
  /// Writes `content` gzip-compressed.
  std::string writeGz(const std::string &name,
                      const std::string &content) const {
    std::string path = dir + "/" + name;
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
    gzclose(f);
    return path;
  }
  std::string path(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Path of a committed fixture under test/Graph/Inputs.
inline std::string inputPath(const std::string &name) {
  return std::string(GNNC_GRAPH_TEST_INPUTS) + "/" + name;
}

/// The shared datasets folder: $GNNC_DATASETS, else <repo>/../shared/datasets.
inline std::string datasetsDir() {
  if (const char *env = std::getenv("GNNC_DATASETS"))
    return env;
  return std::string(GNNC_REPO_SOURCE_DIR) + "/../shared/datasets";
}

} // namespace gnnc::test

#endif // GNNC_TEST_GRAPH_TESTUTIL_H
