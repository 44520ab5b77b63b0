// What the seeded fuzz tests share: knobs and the seed from the environment
// (printed, so a failing run can be replayed), and the corpus files they
// mutate.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fibnic::testing {

// $name as a number, or def when unset or empty.
inline uint64_t EnvOr(const char* name, uint64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

// $env if set, else a random seed; printed with how to replay it and kept
// in the test's XML report.
inline uint64_t FuzzSeed(const char* what, const char* env) {
  const uint64_t seed = EnvOr(env, std::random_device{}());
  std::cout << what << ": seed=" << seed << " (replay with " << env << "=" << seed << ")" << std::endl;
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}

struct CorpusFile {
  std::filesystem::path path;
  std::string text;
};

// The corpus files in dir with this extension, in directory order.
inline std::vector<CorpusFile> ReadCorpus(const std::filesystem::path& dir, const std::string& extension = ".req") {
  std::vector<CorpusFile> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != extension) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back({e.path(), ss.str()});
  }
  return out;
}

}  // namespace fibnic::testing
