#pragma once
// Whole-file text I/O and the project root, for the stages that write output folders.
#include <filesystem>
#include <string>

namespace stepgen {

/// Writes `text` to `p`, creating parent folders. Throws std::runtime_error if it cannot.
void writeFile(const std::filesystem::path& p, const std::string& text);
/// The whole file as text ("" if it cannot be read).
std::string readText(const std::filesystem::path& p);
/// The project root (templates, flows, harness sources): $STEPGEN_ROOT if set, else the
/// source folder stepgen was built from.
std::string stepgenRoot();

}  // namespace stepgen
