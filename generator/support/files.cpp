#include "support/files.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace stepgen {

void writeFile(const std::filesystem::path& p, const std::string& text) {
  // A bare file name has no parent: create_directories("") throws.
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
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

}  // namespace stepgen
