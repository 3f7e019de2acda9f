#pragma once
// Whole-file text I/O and the project root, for the stages that write output folders.
#include <filesystem>
#include <string>

namespace stepgen {

/// Writes `text` to `p`, creating parent folders. Throws std::runtime_error if it cannot.
void writeFile(const std::filesystem::path& p, const std::string& text);
/// Writes `text` to `file` through `file`.tmp-<pid> and a rename, creating parent folders:
/// a reader (another process) sees the whole file or none. Throws std::runtime_error if it
/// cannot.
void writeFileAtomically(const std::filesystem::path& file, const std::string& text);
/// A folder of this process's own beside `dest` (`dest`.tmp-<pid>, emptied and created) in
/// which to build what publishFolder then moves to `dest`. Throws
/// std::filesystem::filesystem_error if it cannot be made.
std::filesystem::path privateFolderFor(const std::filesystem::path& dest);
/// Moves folder `work` to `dest` by one rename, so that another process sharing the parent
/// (a build or synthesis cache) sees the whole folder or none. False, with `work` removed,
/// when `dest` could not be taken (another process published it first).
bool publishFolder(const std::filesystem::path& work, const std::filesystem::path& dest);
/// The whole file as text ("" if it cannot be read).
std::string readText(const std::filesystem::path& p);
/// The project root (templates, flows, harness sources): $STEPGEN_ROOT if set, else the
/// source folder stepgen was built from.
std::string stepgenRoot();

/// An exclusive lock on a file (flock; created if missing), held until destroyed: for work
/// that several processes may start at once on one folder (the fabric build cache). The
/// default-constructed lock holds nothing. Blocks until the lock is free. Throws
/// std::runtime_error if the file cannot be opened.
class FileLock {
 public:
  FileLock() = default;
  explicit FileLock(const std::filesystem::path& file);
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  int fd_ = -1;
};

}  // namespace stepgen
