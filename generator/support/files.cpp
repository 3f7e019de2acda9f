#include "support/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <cerrno>
#include <stdexcept>

namespace stepgen {

void writeFile(const std::filesystem::path& p, const std::string& text) {
  // A bare file name has no parent: create_directories("") throws.
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

void writeFileAtomically(const std::filesystem::path& file, const std::string& text) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  const std::filesystem::path tmp = file.string() + fmt::format(".tmp-{}", getpid());
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error("cannot write " + file.string() + ": " + ec.message());
  }
}

std::filesystem::path privateFolderFor(const std::filesystem::path& dest) {
  const std::filesystem::path work = dest.string() + fmt::format(".tmp-{}", getpid());
  std::filesystem::remove_all(work);
  std::filesystem::create_directories(work);
  return work;
}

bool publishFolder(const std::filesystem::path& work, const std::filesystem::path& dest) {
  std::error_code ec, ignored;
  std::filesystem::rename(work, dest, ec);
  if (ec) std::filesystem::remove_all(work, ignored);
  return !ec;
}

std::string readText(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string stepgenRoot() {
  const char* env = std::getenv("STEPGEN_ROOT");
  return env && *env ? env : STEPGEN_ROOT;
}

FileLock::FileLock(const std::filesystem::path& file) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  fd_ = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot open lock file " + file.string());
  while (flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) throw std::runtime_error("cannot lock " + file.string());
}

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_, o.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace stepgen
