#pragma once
// Typed reads of operator attributes (Op::attrs), with located errors.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace stepgen {

/// Integer attribute `key` of op (a plain integer or an expression over the graph's
/// symbols). Throws DiagError G-130 naming the op, the key and its location.
int64_t attrInt(const StepGraph& g, const Op& op, const std::string& key);
/// Like attrInt, with a default when the key is absent.
int64_t attrIntOr(const StepGraph& g, const Op& op, const std::string& key, int64_t dflt);
/// String attribute; throws G-130 when absent or a list.
std::string attrString(const Op& op, const std::string& key);
/// List of integer expressions, evaluated with the graph's symbols (e.g. tile: [tb, D]).
std::vector<int64_t> attrIntList(const StepGraph& g, const Op& op, const std::string& key);
/// List of lists of integers (e.g. strides: [[1, 0], [0, 0]]).
std::vector<std::vector<int64_t>> attrIntMatrix(const StepGraph& g, const Op& op, const std::string& key);

}  // namespace stepgen
