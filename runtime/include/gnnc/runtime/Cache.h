//===- Cache.h - On-disk cache of compiled kernels --------------*- C++ -*-===//
//
// Compiled kernels are kept in <dir>/<key>.cubin (or .ptx), where the key is
// the SHA-256 of the source, the program name, every compile option (the
// in-memory headers' names and contents among them, so that a change to
// gnnc's device helpers recompiles), the NVRTC version and the cache format
// version. Entries are written to a
// unique temporary file in the same directory, fsync'ed and renamed over the
// final name, so concurrent processes never see a partial entry. Each entry
// starts with a header (magic, key, lengths, SHA-256 of the contents); an
// entry that fails the check is deleted and recompiled, never loaded.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_CACHE_H
#define GNNC_RUNTIME_CACHE_H

#include "gnnc/runtime/Nvrtc.h"
#include "gnnc/runtime/Status.h"

#include <string>
#include <string_view>

namespace gnnc::rt {

/// The SHA-256 of `data`, as 64 lowercase hex digits.
std::string sha256Hex(std::string_view data);

/// The cache directory chosen from the environment: $GNNC_CACHE_DIR, else
/// $XDG_CACHE_HOME/gnnc, else $HOME/.cache/gnnc; "off" when GNNC_CACHE_DIR
/// is "off"; empty when none of the variables is set.
std::string defaultCacheDirectory();

/// An on-disk cache of NVRTC output. Cheap to copy; safe to use from several
/// threads and processes at once.
class KernelCache {
public:
  /// A cache in `directory`, or in defaultCacheDirectory() when empty. The
  /// directory "off" disables the cache. The directory is created (mkdir -p)
  /// on first use.
  explicit KernelCache(std::string directory = "");

  /// A cache that always compiles and never touches the disk.
  static KernelCache disabled();

  bool enabled() const { return enabled_; }
  /// Turns caching on or off; off means getOrCompile always compiles.
  void setEnabled(bool enabled) { enabled_ = enabled && !directory_.empty(); }
  const std::string &directory() const { return directory_; }

  /// The key (64 hex digits) of a compilation.
  std::string key(const std::string &source, const std::string &programName,
                  const CompileOptions &options) const;
  /// The file that holds (or would hold) the entry for `key`.
  std::string entryPath(const std::string &key, bool isPtx) const;

  /// Returns the cached output for this compilation, or compiles and stores
  /// it. `hit` (optional) says whether the cache answered.
  Expected<CompiledKernel> getOrCompile(const std::string &source,
                                        const std::string &programName,
                                        const CompileOptions &options,
                                        bool *hit = nullptr) const;

  /// Reads and checks the entry for `key`. Returns false (and deletes the
  /// file) when it is missing, truncated or corrupted.
  bool lookup(const std::string &key, bool isPtx, CompiledKernel &out) const;
  /// Stores `kernel` under `key` atomically.
  Status store(const std::string &key, const CompiledKernel &kernel) const;

private:
  std::string directory_;
  bool enabled_ = true;
};

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_CACHE_H
