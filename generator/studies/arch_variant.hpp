#pragma once
// Copies of a shipped architecture file with one integer setting changed, for the studies.
#include <string>

namespace stepgen {

/// Writes `<dir>/arch_<key><value>.yaml`: the file at `archPath` with every `key: <int>`
/// replaced by `key: value` and the arch renamed `<name>_<key><value>` (a distinct fabric,
/// so build caches keep them apart). Returns its path. Throws std::runtime_error when the
/// file cannot be read or written.
std::string archVariant(const std::string& archPath, const std::string& dir, const std::string& key, int value);

/// The text of the architecture file at `archPath` with the arch renamed `<name><suffix>`.
/// Throws std::runtime_error when the file cannot be read.
std::string renamedArchText(const std::string& archPath, const std::string& suffix);

}  // namespace stepgen
