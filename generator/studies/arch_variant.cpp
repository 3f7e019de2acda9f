// archVariant: an architecture file with one integer setting changed.
#include "studies/arch_variant.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <regex>
#include <stdexcept>

#include "support/files.hpp"

namespace stepgen {

std::string renamedArchText(const std::string& archPath, const std::string& suffix) {
  const std::string in = readText(archPath);
  if (in.empty()) throw std::runtime_error("cannot read architecture file " + archPath);
  return std::regex_replace(in, std::regex("(^|\n)name: *([A-Za-z0-9_]+)"), "$1name: $2" + suffix);
}

std::string archVariant(const std::string& archPath, const std::string& dir, const std::string& key, int value) {
  const std::string text = std::regex_replace(renamedArchText(archPath, fmt::format("_{}{}", key, value)),
                                              std::regex(key + ": *[0-9]+"), fmt::format("{}: {}", key, value));
  const std::filesystem::path p = std::filesystem::path(dir) / fmt::format("arch_{}{}.yaml", key, value);
  writeFile(p, text);
  return p.string();
}

}  // namespace stepgen
