//===- Cache.cpp - On-disk cache of compiled kernels ----------------------===//

#include "gnnc/runtime/Cache.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace gnnc::rt {

//===----------------------------------------------------------------------===//
// SHA-256 (FIPS 180-4)
//===----------------------------------------------------------------------===//

namespace {

class Sha256 {
public:
  void update(const void *data, size_t size) {
    const auto *bytes = static_cast<const uint8_t *>(data);
    totalBytes += size;
    while (size > 0) {
      size_t take = std::min(size, sizeof(block) - blockUsed);
      std::memcpy(block + blockUsed, bytes, take);
      blockUsed += take;
      bytes += take;
      size -= take;
      if (blockUsed == sizeof(block)) {
        compress(block);
        blockUsed = 0;
      }
    }
  }
  void update(std::string_view text) { update(text.data(), text.size()); }
  /// Adds `text` preceded by its length so that field boundaries matter.
  void updateField(std::string_view text) {
    uint64_t size = text.size();
    uint8_t encoded[8];
    for (int i = 0; i < 8; ++i)
      encoded[i] = static_cast<uint8_t>(size >> (8 * i));
    update(encoded, sizeof(encoded));
    update(text);
  }

  std::array<uint8_t, 32> finish() {
    uint64_t bits = totalBytes * 8;
    uint8_t pad = 0x80;
    update(&pad, 1);
    uint8_t zero = 0;
    while (blockUsed != 56)
      update(&zero, 1);
    uint8_t length[8];
    for (int i = 0; i < 8; ++i)
      length[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    update(length, 8);
    std::array<uint8_t, 32> digest;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j)
        digest[4 * i + j] = static_cast<uint8_t>(state[i] >> (24 - 8 * j));
    return digest;
  }

private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress(const uint8_t *chunk) {
    static const uint32_t roundConstants[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
        0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
        0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
        0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
        0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (uint32_t(chunk[4 * i]) << 24) |
             (uint32_t(chunk[4 * i + 1]) << 16) |
             (uint32_t(chunk[4 * i + 2]) << 8) | uint32_t(chunk[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3],
             e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      uint32_t choose = (e & f) ^ (~e & g);
      uint32_t t1 = h + s1 + choose + roundConstants[i] + w[i];
      uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      uint32_t t2 = s0 + majority;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }

  uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t block[64];
  size_t blockUsed = 0;
  uint64_t totalBytes = 0;
};

std::string toHex(const std::array<uint8_t, 32> &digest) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex += digits[byte >> 4];
    hex += digits[byte & 15];
  }
  return hex;
}

} // namespace

std::string sha256Hex(std::string_view data) {
  Sha256 hasher;
  hasher.update(data);
  return toHex(hasher.finish());
}

//===----------------------------------------------------------------------===//
// Entry format
//===----------------------------------------------------------------------===//

/// Bump when the entry layout or the key derivation changes.
static constexpr const char *cacheFormatVersion = "gnnc-kernel-cache-2";
static constexpr char entryMagic[8] = {'G', 'N', 'N', 'C', 'K', 'C', 0, 1};
// magic, key (hex), binary length, log length, flags, reserved, checksum.
static constexpr size_t headerSize = 8 + 64 + 8 + 8 + 4 + 4 + 32;

static void putLittle(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>(static_cast<uint8_t>(value >> (8 * i)));
}

static uint64_t getLittle(const char *in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= uint64_t(static_cast<uint8_t>(in[i])) << (8 * i);
  return value;
}

static std::array<uint8_t, 32> contentChecksum(const std::string &binary,
                                               const std::string &log) {
  Sha256 hasher;
  hasher.updateField(binary);
  hasher.updateField(log);
  return hasher.finish();
}

//===----------------------------------------------------------------------===//
// File helpers
//===----------------------------------------------------------------------===//

static std::string errnoText(int error) { return std::strerror(error); }

/// mkdir -p.
static Status makeDirectories(const std::string &path) {
  std::string prefix;
  size_t position = 0;
  while (position <= path.size()) {
    size_t slash = path.find('/', position);
    if (slash == std::string::npos)
      slash = path.size();
    prefix = path.substr(0, slash);
    position = slash + 1;
    if (prefix.empty())
      continue;
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return Status::error("creating the kernel cache directory '" + path +
                           "': cannot create '" + prefix +
                           "': " + errnoText(errno));
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return Status::error("creating the kernel cache directory '" + path +
                         "': it exists but is not a directory");
  return Status::ok();
}

static bool readFile(const std::string &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat info;
  bool good = ::fstat(fd, &info) == 0;
  if (good) {
    out.resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (good && done < out.size()) {
      ssize_t got = ::read(fd, out.data() + done, out.size() - done);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        good = false;
      else
        done += static_cast<size_t>(got);
    }
  }
  ::close(fd);
  return good;
}

static Status writeAll(int fd, const std::string &data,
                       const std::string &path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t wrote = ::write(fd, data.data() + done, data.size() - done);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0)
      return Status::error("writing '" + path + "': " + errnoText(errno));
    done += static_cast<size_t>(wrote);
  }
  return Status::ok();
}

static std::string uniqueSuffix() {
  thread_local std::mt19937_64 generator([] {
    std::random_device device;
    uint64_t seed = (uint64_t(device()) << 32) ^ device();
    seed ^= std::hash<std::thread::id>()(std::this_thread::get_id());
    seed ^= uint64_t(::getpid()) << 16;
    seed ^=
        uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    return seed;
  }());
  static const char digits[] = "0123456789abcdef";
  uint64_t value = generator();
  std::string text;
  for (int i = 0; i < 16; ++i, value >>= 4)
    text += digits[value & 15];
  return std::to_string(::getpid()) + "." + text;
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

std::string defaultCacheDirectory() {
  const char *explicitDir = std::getenv("GNNC_CACHE_DIR");
  if (explicitDir && *explicitDir)
    return explicitDir;
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg)
    return std::string(xdg) + "/gnnc";
  const char *home = std::getenv("HOME");
  if (home && *home)
    return std::string(home) + "/.cache/gnnc";
  return "";
}

KernelCache::KernelCache(std::string directory)
    : directory_(std::move(directory)) {
  if (directory_.empty())
    directory_ = defaultCacheDirectory();
  if (directory_ == "off")
    directory_.clear();
  while (directory_.size() > 1 && directory_.back() == '/')
    directory_.pop_back();
  enabled_ = !directory_.empty();
}

KernelCache KernelCache::disabled() {
  KernelCache cache("off");
  return cache;
}

std::string KernelCache::key(const std::string &source,
                             const std::string &programName,
                             const CompileOptions &options) const {
  Sha256 hasher;
  hasher.updateField(cacheFormatVersion);
  hasher.updateField(nvrtcVersionString());
  hasher.updateField(programName);
  hasher.updateField(source);
  hasher.updateField(options.arch);
  hasher.updateField(options.ptx ? "ptx" : "cubin");
  hasher.updateField(std::to_string(options.extraFlags.size()));
  for (const std::string &flag : options.extraFlags)
    hasher.updateField(flag);
  // The headers NVRTC takes from memory are part of the program: a kernel
  // compiled with other device helpers is another kernel.
  hasher.updateField(std::to_string(options.headers.size()));
  for (const InMemoryHeader &header : options.headers) {
    hasher.updateField(header.name);
    hasher.updateField(header.text);
  }
  return toHex(hasher.finish());
}

std::string KernelCache::entryPath(const std::string &key, bool isPtx) const {
  return directory_ + "/" + key + (isPtx ? ".ptx" : ".cubin");
}

bool KernelCache::lookup(const std::string &key, bool isPtx,
                         CompiledKernel &out) const {
  std::string path = entryPath(key, isPtx);
  std::string data;
  if (!readFile(path, data))
    return false;
  auto valid = [&] {
    if (data.size() < headerSize ||
        std::memcmp(data.data(), entryMagic, sizeof(entryMagic)) != 0 ||
        data.compare(8, 64, key) != 0)
      return false;
    uint64_t binarySize = getLittle(data.data() + 72, 8);
    uint64_t logSize = getLittle(data.data() + 80, 8);
    uint64_t flags = getLittle(data.data() + 88, 4);
    if (((flags & 1) != 0) != isPtx || binarySize == 0 ||
        binarySize > data.size() || logSize > data.size() ||
        headerSize + binarySize + logSize != data.size())
      return false;
    out.binary = data.substr(headerSize, binarySize);
    out.log = data.substr(headerSize + binarySize, logSize);
    out.isPtx = isPtx;
    std::array<uint8_t, 32> checksum = contentChecksum(out.binary, out.log);
    return std::memcmp(data.data() + 96, checksum.data(), 32) == 0;
  }();
  if (!valid) {
    // A truncated or corrupted entry: drop it so that it gets rewritten.
    ::unlink(path.c_str());
    out = CompiledKernel();
  }
  return valid;
}

Status KernelCache::store(const std::string &key,
                          const CompiledKernel &kernel) const {
  if (directory_.empty())
    return Status::error("storing a kernel: the kernel cache is disabled");
  GNNC_RETURN_IF_ERROR(makeDirectories(directory_));

  std::string data(entryMagic, sizeof(entryMagic));
  data += key;
  putLittle(data, kernel.binary.size(), 8);
  putLittle(data, kernel.log.size(), 8);
  putLittle(data, kernel.isPtx ? 1 : 0, 4);
  putLittle(data, 0, 4);
  std::array<uint8_t, 32> checksum = contentChecksum(kernel.binary, kernel.log);
  data.append(reinterpret_cast<const char *>(checksum.data()), 32);
  data += kernel.binary;
  data += kernel.log;

  std::string finalPath = entryPath(key, kernel.isPtx);
  std::string tempPath;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tempPath = directory_ + "/" + key + ".tmp." + uniqueSuffix();
    fd =
        ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return Status::error("storing a kernel in the cache: cannot create '" +
                         tempPath + "': " + errnoText(errno));
  Status written = writeAll(fd, data, tempPath);
  if (written && ::fsync(fd) != 0)
    written = Status::error("syncing '" + tempPath + "': " + errnoText(errno));
  if (::close(fd) != 0 && written)
    written = Status::error("closing '" + tempPath + "': " + errnoText(errno));
  if (written && ::rename(tempPath.c_str(), finalPath.c_str()) != 0)
    written = Status::error("renaming '" + tempPath + "' to '" + finalPath +
                            "': " + errnoText(errno));
  if (!written) {
    ::unlink(tempPath.c_str());
    return written.withContext("storing a kernel in the cache");
  }
  return Status::ok();
}

Expected<CompiledKernel>
KernelCache::getOrCompile(const std::string &source,
                          const std::string &programName,
                          const CompileOptions &options, bool *hit) const {
  if (hit)
    *hit = false;
  if (!enabled_)
    return compileCuda(source, programName, options);
  std::string entryKey = key(source, programName, options);
  CompiledKernel cached;
  if (lookup(entryKey, options.ptx, cached)) {
    if (hit)
      *hit = true;
    return cached;
  }
  Expected<CompiledKernel> compiled = compileCuda(source, programName, options);
  if (!compiled)
    return compiled;
  GNNC_RETURN_IF_ERROR(store(entryKey, *compiled));
  return compiled;
}

} // namespace gnnc::rt
