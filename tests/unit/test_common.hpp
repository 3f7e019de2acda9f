#pragma once
// Helpers every unit test file may use. Defined once here, not per file, because the test
// files are compiled ten to a unit (CMake's unity build) and per-file copies would collide.
#include <cstdint>
#include <string>

#include "common/fp.hpp"

/// The repository's root folder (arch/, examples/, tests/data/ are under it).
inline std::string root() { return STEPGEN_ROOT; }
/// The same, as a constant.
inline const std::string kRoot = STEPGEN_ROOT;
/// An fp32 word's value as a double (exact).
inline double f(uint32_t bits) { return double(stepgen::bitsToFloat(bits)); }
