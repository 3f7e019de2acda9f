// Minimal NumPy .npy (format version 1.0) reader/writer for little-endian float32 arrays.
//
// Format (numpy/lib/format.py, version 1.0): the 6-byte magic "\x93NUMPY", major 1, minor 0,
// a little-endian uint16 header length HLEN, then HLEN bytes of ASCII Python dict literal
// such as "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", padded with
// spaces and terminated by '\n' so that 10 + HLEN is a multiple of 64, then the raw data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// A float32 array read from / written to a .npy file. `shape` has 1 or 2 entries
/// (elements per dimension); `data` holds the product of `shape` values in C (row-major) order.
struct NpyArray {
    std::vector<size_t> shape;
    std::vector<float> data;

    /// Rows: shape[0] for 2-D, 1 for 1-D.
    size_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
    /// Columns: shape[1] for 2-D, shape[0] for 1-D.
    size_t cols() const { return shape.empty() ? 0 : shape.back(); }
};

/// Reads a .npy file (version 1.0; 2.0 is accepted too) of dtype '<f4', C order, 1-D or
/// 2-D. Throws std::runtime_error naming the file and the
/// problem: missing/unreadable file, bad magic, unsupported version, malformed header,
/// wrong dtype, fortran_order True, unsupported rank, truncated data.
NpyArray readNpy(const std::string& path);

/// Returns the complete .npy v1.0 header (magic through the terminating '\n', a multiple
/// of 64 bytes) for a '<f4' C-order array of the given shape (1 or 2 entries).
/// Throws std::invalid_argument for another rank.
std::string npyHeader(const std::vector<size_t>& shape);

/// Writes `count` = product(shape) float32 values from `data` as a .npy v1.0 file
/// (little-endian, C order). Throws std::runtime_error naming the file if it cannot be
/// written, std::invalid_argument for a rank other than 1 or 2.
void writeNpy(const std::string& path, const std::vector<size_t>& shape, const float* data);

/// Convenience overload: writes `a.data` with `a.shape`; throws std::invalid_argument if
/// their sizes disagree.
void writeNpy(const std::string& path, const NpyArray& a);

}  // namespace stepgen
