//===- CacheTest.cpp - The on-disk kernel cache ---------------------------===//

#include "TestUtil.h"

#include "gnnc/runtime/Cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gnnc;
using namespace gnnc::rt;

namespace {

CompileOptions sm90() {
  CompileOptions options;
  options.arch = "sm_90";
  return options;
}

std::vector<std::string> listDir(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *dir = ::opendir(path.c_str())) {
    while (dirent *entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        names.push_back(name);
    }
    ::closedir(dir);
  }
  return names;
}

/// Sets an environment variable for one scope and restores it afterwards.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved)
      ::setenv(name, saved->c_str(), 1);
    else
      ::unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> saved;
};

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(KernelCache, MissThenHit) {
  test::TempDir dir;
  KernelCache cache(dir.path());
  EXPECT_TRUE(cache.enabled());
  bool hit = true;
  Expected<CompiledKernel> first =
      cache.getOrCompile(test::saxpySource(), "saxpy.cu", sm90(), &hit);
  ASSERT_TRUE(first) << first.message();
  EXPECT_FALSE(hit);
  Expected<CompiledKernel> second =
      cache.getOrCompile(test::saxpySource(), "saxpy.cu", sm90(), &hit);
  ASSERT_TRUE(second) << second.message();
  EXPECT_TRUE(hit);
  EXPECT_EQ(first->binary, second->binary);
  EXPECT_EQ(first->log, second->log);
  std::string key = cache.key(test::saxpySource(), "saxpy.cu", sm90());
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(listDir(dir.path()), std::vector<std::string>{key + ".cubin"});

  CompileOptions ptx = sm90();
  ptx.ptx = true;
  Expected<CompiledKernel> text =
      cache.getOrCompile(test::saxpySource(), "saxpy.cu", ptx, &hit);
  ASSERT_TRUE(text) << text.message();
  EXPECT_FALSE(hit);
  EXPECT_TRUE(text->isPtx);
  text = cache.getOrCompile(test::saxpySource(), "saxpy.cu", ptx, &hit);
  ASSERT_TRUE(text) << text.message();
  EXPECT_TRUE(hit);
  EXPECT_TRUE(text->isPtx);
}

TEST(KernelCache, KeysDependOnEverything) {
  KernelCache cache(std::string("/tmp/unused"));
  std::string source = test::saxpySource();
  std::string base = cache.key(source, "saxpy.cu", sm90());
  EXPECT_EQ(base, cache.key(source, "saxpy.cu", sm90()));
  CompileOptions sm80 = sm90();
  sm80.arch = "sm_80";
  CompileOptions ptx = sm90();
  ptx.ptx = true;
  CompileOptions fast = sm90();
  fast.extraFlags = {"--use_fast_math"};
  EXPECT_NE(base, cache.key(source, "saxpy.cu", sm80));
  EXPECT_NE(base, cache.key(source, "saxpy.cu", ptx));
  EXPECT_NE(base, cache.key(source, "saxpy.cu", fast));
  EXPECT_NE(base, cache.key(source + " ", "saxpy.cu", sm90()));
  EXPECT_NE(base, cache.key(source, "other.cu", sm90()));
}

class CorruptEntry : public ::testing::TestWithParam<bool> {};

TEST_P(CorruptEntry, IsDetectedAndRecompiled) {
  bool truncate = GetParam();
  test::TempDir dir;
  KernelCache cache(dir.path());
  bool hit = false;
  Expected<CompiledKernel> good =
      cache.getOrCompile(test::saxpySource(), "saxpy.cu", sm90(), &hit);
  ASSERT_TRUE(good) << good.message();
  std::string path = cache.entryPath(
      cache.key(test::saxpySource(), "saxpy.cu", sm90()), false);
  std::string data = test::readFile(path);
  ASSERT_GT(data.size(), 200u);
  if (truncate)
    data.resize(data.size() / 2);
  else
    data[data.size() / 2] ^= 0x20;
  test::writeFile(path, data);

  Expected<CompiledKernel> again =
      cache.getOrCompile(test::saxpySource(), "saxpy.cu", sm90(), &hit);
  ASSERT_TRUE(again) << again.message();
  EXPECT_FALSE(hit) << "a corrupted entry was loaded";
  EXPECT_EQ(again->binary, good->binary);
  again = cache.getOrCompile(test::saxpySource(), "saxpy.cu", sm90(), &hit);
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(hit) << "the entry was not rewritten";
}

INSTANTIATE_TEST_SUITE_P(TruncateOrFlip, CorruptEntry, ::testing::Bool());

TEST(KernelCache, ConcurrentProcessesFillOneKey) {
  test::TempDir dir;
  const int processes = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      KernelCache cache(dir.path());
      Expected<CompiledKernel> kernel =
          cache.getOrCompile(test::saxpySource(), "saxpy.cu", sm90());
      bool good = kernel && kernel->binary.compare(0, 4,
                                                   "\x7f"
                                                   "ELF") == 0;
      ::_exit(good ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  KernelCache cache(dir.path());
  CompiledKernel entry;
  EXPECT_TRUE(cache.lookup(cache.key(test::saxpySource(), "saxpy.cu", sm90()),
                           false, entry));
  EXPECT_EQ(listDir(dir.path()).size(), 1u) << "temporary files were left";
}

TEST(KernelCache, ConcurrentThreadsFillOneKey) {
  test::TempDir dir;
  const int threads = 4;
  std::vector<std::string> binaries(threads);
  std::vector<std::string> errors(threads);
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i)
    workers.emplace_back([&, i] {
      KernelCache cache(dir.path());
      Expected<CompiledKernel> kernel =
          cache.getOrCompile(test::saxpySource(), "saxpy.cu", sm90());
      if (kernel)
        binaries[i] = kernel->binary;
      else
        errors[i] = kernel.message();
    });
  for (std::thread &worker : workers)
    worker.join();
  for (int i = 0; i < threads; ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(binaries[i], binaries[0]);
  }
  EXPECT_EQ(listDir(dir.path()).size(), 1u);
}

TEST(KernelCache, Disabled) {
  KernelCache off = KernelCache::disabled();
  EXPECT_FALSE(off.enabled());
  bool hit = true;
  for (int i = 0; i < 2; ++i) {
    Expected<CompiledKernel> kernel =
        off.getOrCompile(test::saxpySource(), "saxpy.cu", sm90(), &hit);
    ASSERT_TRUE(kernel) << kernel.message();
    EXPECT_FALSE(hit);
  }
  ScopedEnv env("GNNC_CACHE_DIR", "off");
  EXPECT_FALSE(KernelCache().enabled());
  test::TempDir dir;
  KernelCache on(dir.path());
  on.setEnabled(false);
  ASSERT_TRUE(on.getOrCompile(test::saxpySource(), "saxpy.cu", sm90()));
  EXPECT_TRUE(listDir(dir.path()).empty());
}

TEST(KernelCache, DirectoryFromEnvironment) {
  {
    ScopedEnv cacheDir("GNNC_CACHE_DIR", "/tmp/gnnc-explicit");
    EXPECT_EQ(KernelCache().directory(), "/tmp/gnnc-explicit");
    EXPECT_EQ(KernelCache("/tmp/arg/").directory(), "/tmp/arg");
  }
  ScopedEnv cacheDir("GNNC_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(KernelCache().directory(), "/tmp/xdg/gnnc");
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/tmp/home");
  EXPECT_EQ(KernelCache().directory(), "/tmp/home/.cache/gnnc");
}

TEST(KernelCache, CreatesDirectoryOrSaysWhy) {
  test::TempDir dir;
  KernelCache nested(dir.path() + "/a/b/c");
  ASSERT_TRUE(nested.getOrCompile(test::saxpySource(), "saxpy.cu", sm90()));
  EXPECT_EQ(listDir(dir.path() + "/a/b/c").size(), 1u);

  test::writeFile(dir.path() + "/file", "x");
  KernelCache impossible(dir.path() + "/file/sub");
  Expected<CompiledKernel> kernel =
      impossible.getOrCompile(test::saxpySource(), "saxpy.cu", sm90());
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("creating the kernel cache directory"),
            std::string::npos)
      << kernel.message();
}

} // namespace
