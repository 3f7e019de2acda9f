#pragma once
// StagingDir: output folders that appear only when complete (brief: nothing half-written).
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace stepgen {

/// A sibling temporary folder `.<name>.partial-<pid>` that replaces `dir` on commit() and is
/// removed otherwise. Throws std::filesystem::filesystem_error when it cannot be created.
struct StagingDir {
  std::filesystem::path final, tmp;
  bool committed = false;
  explicit StagingDir(const std::string& dir) : final(dir) {
    tmp = final.parent_path() / fmt::format(".{}.partial-{}", final.filename().string(), ::getpid());
    std::filesystem::remove_all(tmp);
    std::filesystem::create_directories(tmp);
  }
  void commit() {
    std::filesystem::remove_all(final);
    std::filesystem::rename(tmp, final);
    committed = true;
  }
  ~StagingDir() {
    if (!committed) {
      std::error_code ec;
      std::filesystem::remove_all(tmp, ec);
    }
  }
};

}  // namespace stepgen
