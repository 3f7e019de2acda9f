#pragma once
// Stream tokens: the element-level view of a STeP stream (docs/hardware.md section 1), shared by
// the model, the mapper's tests and the builders, and the values of off-chip tensors.
// A Data token is one tile (or a tuple of tiles made by Zip) with the stop level that
// follows it; Stop closes a (possibly empty) group; Done ends the stream.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace stepgen {

struct Token {
  enum class Kind : uint8_t { Data, Stop, Done };
  Kind kind = Kind::Data;
  int stop = 0;                 ///< stop level after this element (0 = none)
  int64_t rows = 0, cols = 0;   ///< tile shape (Data, non-tuple)
  std::shared_ptr<const std::vector<uint32_t>> data;  ///< rows*cols fp32 bit patterns, row-major
  std::vector<Token> parts;     ///< Zip tuples: the members, each a Data token
  std::vector<int> sel;  ///< Selector elements: the chosen outputs (multi-hot), ascending

  int64_t words() const { return rows * cols; }
  /// A Data token holding a rows x cols tile (row-major fp32 bit patterns) and its stop.
  static Token tile(int64_t rows, int64_t cols, std::vector<uint32_t> d, int stop) {
    Token t;
    t.rows = rows, t.cols = cols, t.stop = stop;
    t.data = std::make_shared<const std::vector<uint32_t>>(std::move(d));
    return t;
  }
  /// A Data token of a rows x cols tile whose values are not computed (the timing-only
  /// model, docs/step_semantics.md#timing-only): every operator passes "no values" on, so
  /// only shapes, stops and selectors flow.
  static Token shapeOnly(int64_t rows, int64_t cols, int stop) {
    Token t;
    t.rows = rows, t.cols = cols, t.stop = stop;
    return t;
  }
  /// False for a shape-only tile (and for Stop / Done).
  bool hasValues() const { return data != nullptr; }
  static Token done() { Token t; t.kind = Kind::Done; return t; }
  static Token stopOnly(int s) { Token t; t.kind = Kind::Stop; t.stop = s; return t; }
};

using TokenStream = std::vector<Token>;

/// Per EagerMerge op index: the input of each chunk in arrival order (an EagerMerge on a
/// compute unit merges in the order its tiles arrive, which only the timing model knows).
using MergeOrders = std::map<int, std::vector<int>>;

/// The value of an off-chip tensor: a row-major fp32 matrix (bit patterns), rows x cols.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<uint32_t> data;
};

/// Beats a token occupies on a link of `wordsPerBeat` words: a tile is rows*cols/W beats,
/// Stop and Done one beat each (docs/hardware.md section 1).
inline int64_t tokenBeats(const Token& t, int64_t wordsPerBeat) {
  return t.kind == Token::Kind::Data ? (t.words() + wordsPerBeat - 1) / wordsPerBeat : 1;
}

}  // namespace stepgen
