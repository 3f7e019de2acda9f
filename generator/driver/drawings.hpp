#pragma once
// Pictures of a compiled program: the graph as the fabric runs it (Graphviz DOT, coloured by
// section, rendered to SVG when Graphviz is installed) and the fabric in each section (SVG:
// units, the operator each runs, the links used).
#include <filesystem>
#include <string>

#include "driver/pipeline.hpp"

namespace stepgen {

/// The sectioned graph as a Graphviz digraph: one node per op (name, operator, function),
/// one edge per stream from producer to each consumer, one cluster per section filled with
/// its colour. Deterministic text.
std::string graphDot(const CompileResult& c);

/// SVG of the unit grid while section `section` runs: every site with its instance name and
/// the op it runs in that section, one line per route of the section (with the stream's name
/// as title). Deterministic, well-formed XML. Throws std::out_of_range for a bad section.
std::string fabricSvg(const CompileResult& c, int section);

/// Writes graph.dot, graph.svg (only when a `dot` executable is on PATH) and
/// fabric_s<k>.svg for every section into `dir`. Throws std::runtime_error when a file
/// cannot be written; a failing Graphviz run only leaves graph.svg out.
void writeDrawings(const CompileResult& c, const std::filesystem::path& dir);

}  // namespace stepgen
