#pragma once
// Shared by the fuzz targets: the input bytes become a file (the loaders take paths, as the
// command line does), and an exception other than the one a reader documents is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <unistd.h>

namespace stepgen::fuzz {

/// Writes `size` bytes to a per-process file ending in `ext` (e.g. ".yaml") and returns its
/// path; the file is overwritten by the next call.
inline std::string asFile(const uint8_t* data, size_t size, const std::string& ext) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/stepgen_fuzz_" + std::to_string(getpid()) + ext;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

/// Runs `f`; an exception of type Allowed (the reader's documented error) is the expected
/// answer to bad input, any other escaping exception aborts: libFuzzer keeps the input.
template <class Allowed, class F>
void expectOnly(const char* target, F&& f) {
  try {
    f();
  } catch (const Allowed&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: unexpected exception: %s\n", target, e.what());
    std::abort();
  }
}

}  // namespace stepgen::fuzz
