#pragma once
// Tensor values in and out of a run: input tensors from .npy files (or seeded random
// values), matrices to and from .npy.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "ir/graph.hpp"
#include "ir/tokens.hpp"
#include "passes/shape_check.hpp"

namespace stepgen {

/// Throws DiagError R-406 (at the largest tensor) when twice the bytes of all the graph's
/// tensors at its symbol values (4 bytes per word) exceed the memory available on this
/// machine (/proc/meminfo MemAvailable): the model holds the tensors and the streams between
/// them, so it would fail later with a bare allocation error.
void checkTensorMemory(const StepGraph& g);

/// Throws DiagError R-406 (at the stream with the most elements) when the token streams of
/// `g` (types `s`) would need more memory than is available: the timing-only model reads no
/// tensor but holds every stream's elements (about kStreamElementBytes each with the timing
/// model's per-tile state). Dims that are dynamic count as 1.
void checkStreamMemory(const StepGraph& g, const ShapeResult& s);

/// Bytes one stream element costs the timing-only model: a Token (shape, stop, selector)
/// and the timing engine's per-tile times of one link and consumer (measured: about 200).
constexpr long double kStreamElementBytes = 256;

/// Input tensors: read `<dir>/<tensor>.npy` for every input tensor, or, when dir is empty,
/// seeded uniform random values (x in [-1, 1), weights scaled by 1/sqrt(rows)), except a
/// SelectGen's routing tensor, which gets its trace's decisions (as the MoE builders write
/// them). Throws DiagError R-401 naming a missing or malformed file, R-402 a wrong shape, R-406
/// (checkTensorMemory) tensors too large for this machine, before anything is allocated.
std::map<std::string, Matrix> loadInputs(const StepGraph& g, const std::string& dir, uint32_t seed);

/// The input tensors whose values are the shape of a stream (the timing-only model reads
/// them): those a LinearOffChipLoad reads whose stream reaches the meta input of a run load
/// or index load (RandomOffChipLoad with `count` or `index`: its rows hold each run's first
/// tile and length, or the one tile's index) through
/// Broadcast, Partition (data input), Flatten or Promote. By name, with the first run load
/// that needs each.
std::map<std::string, OpId> metaTensors(const StepGraph& g);

/// Reads `<dir>/<tensor>.npy` for the input tensors of `g` named in `names` only. Throws
/// DiagError as loadInputs.
std::map<std::string, Matrix> loadInputsNamed(const StepGraph& g, const std::string& dir, const std::set<std::string>& names);

/// Writes a matrix as a 2-D float32 .npy (bit patterns kept), creating the parent folder.
/// Throws std::runtime_error when the file cannot be written.
void toNpy(const std::filesystem::path& p, const Matrix& m);

/// Reads a .npy of float32 values as a matrix (a 1-D array becomes one row). Throws
/// std::runtime_error for a missing or malformed file.
Matrix fromNpy(const std::filesystem::path& p);

}  // namespace stepgen
