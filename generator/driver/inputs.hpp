#pragma once
// Tensor values in and out of a run: input tensors from .npy files (or seeded random
// values), matrices to and from .npy.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "ir/graph.hpp"
#include "ir/tokens.hpp"

namespace stepgen {

/// Input tensors: read `<dir>/<tensor>.npy` for every input tensor, or, when dir is empty,
/// seeded uniform random values (x in [-1, 1), weights scaled by 1/sqrt(rows)).
/// Throws DiagError R-401 naming a missing or malformed file, R-402 a wrong shape.
std::map<std::string, Matrix> loadInputs(const StepGraph& g, const std::string& dir, uint32_t seed);

/// Writes a matrix as a 2-D float32 .npy (bit patterns kept), creating the parent folder.
/// Throws std::runtime_error when the file cannot be written.
void toNpy(const std::filesystem::path& p, const Matrix& m);

/// Reads a .npy of float32 values as a matrix (a 1-D array becomes one row). Throws
/// std::runtime_error for a missing or malformed file.
Matrix fromNpy(const std::filesystem::path& p);

}  // namespace stepgen
