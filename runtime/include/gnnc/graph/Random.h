//===- Random.h - Portable deterministic random numbers ---------*- C++ -*-===//
//
// SplitMix64 and xoshiro256** with fixed, library-independent output, so that
// generated graphs and features are identical on every machine and standard
// library (std:: distributions are not).
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_GRAPH_RANDOM_H
#define GNNC_GRAPH_RANDOM_H

#include <cstdint>

namespace gnnc::graph {

/// One step of SplitMix64: advances `state` and returns a mixed value.
inline uint64_t splitMix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// xoshiro256** seeded through SplitMix64.
class Rng {
public:
  explicit Rng(uint64_t seed) {
    uint64_t s = seed;
    for (uint64_t &word : state)
      word = splitMix64(s);
  }

  /// The next 64 random bits.
  uint64_t next() {
    uint64_t result = rotl(state[1] * 5, 7) * 9;
    uint64_t t = state[1] << 17;
    state[2] ^= state[0];
    state[3] ^= state[1];
    state[1] ^= state[2];
    state[0] ^= state[3];
    state[2] ^= t;
    state[3] = rotl(state[3], 45);
    return result;
  }

  /// A uniform double in [0, 1) with 53 random bits.
  double nextDouble() { return (next() >> 11) * 0x1.0p-53; }

  /// A uniform integer in [0, bound) (bound > 0), without modulo bias.
  uint64_t nextBelow(uint64_t bound) {
    // Lemire's multiply-shift with rejection.
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < bound) {
      uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state[4];
};

/// A seed for an independent stream `index` derived from `seed`.
inline uint64_t deriveSeed(uint64_t seed, uint64_t index) {
  uint64_t s = seed ^ (index * 0xd1b54a32d192ed03ull + 0x2545f4914f6cdd1dull);
  return splitMix64(s);
}

} // namespace gnnc::graph

#endif // GNNC_GRAPH_RANDOM_H
