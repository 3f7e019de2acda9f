#pragma once
// StagingDir: output folders that appear only when complete (brief: nothing half-written).
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/diag.hpp"

namespace stepgen {

/// A sibling temporary folder `.<name>.partial-<pid>` that replaces `dir` on commit() and is
/// removed otherwise. Throws DiagError R-404 naming `dir` when it cannot be created or put in
/// place.
struct StagingDir {
  std::filesystem::path final, tmp;
  bool committed = false;
  explicit StagingDir(const std::string& dir) : final(dir) {
    tmp = final.parent_path() / fmt::format(".{}.partial-{}", final.filename().string(), ::getpid());
    guarded("create", [&] {
      std::filesystem::remove_all(tmp);
      std::filesystem::create_directories(tmp);
    });
  }
  void commit() {
    guarded("replace", [&] {
      std::filesystem::remove_all(final);
      std::filesystem::rename(tmp, final);
    });
    committed = true;
  }
  template <class F>
  void guarded(const char* what, F&& f) {
    try {
      f();
    } catch (const std::filesystem::filesystem_error& e) {
      throw DiagError("R-404", SourceLoc{final.string()}, fmt::format("cannot {} the output folder: {}", what, e.code().message()));
    }
  }
  ~StagingDir() {
    if (!committed) {
      std::error_code ec;
      std::filesystem::remove_all(tmp, ec);
    }
  }
};

}  // namespace stepgen
