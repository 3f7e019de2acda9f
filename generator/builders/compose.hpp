#pragma once
// composeGraph: one STeP graph from several builders' graphs (stages), as the decoder layer
// is written from RMSNorm, projections, RoPE, GQA attention and the MoE. A stage's ops,
// streams, symbols and own tensors get the stage's prefix; the tensors it shares with other
// stages (an activation one stage stores and the next loads) are renamed to the layer's
// names and declared once by the layer.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/tokens.hpp"

namespace stepgen {

/// One stage: a builder's whole graph text and how it joins the layer.
struct GraphStage {
  std::string prefix;  ///< identifier; its ops, streams, symbols and unshared tensors become <prefix>_<name>
  std::string text;    ///< graph YAML text (docs/graph_format.md), e.g. buildRmsNormGraph's
  /// Stage tensor name -> layer tensor name: these use the layer's declaration (its shape and
  /// role); the stage's own declaration is dropped (its loads and stores are checked against
  /// the layer's shape when the graph is loaded).
  std::map<std::string, std::string> shared;
};

/// A tensor the layer declares (the target of GraphStage::shared).
struct LayerTensor {
  std::string name;
  std::vector<int64_t> shape;  ///< [rows, cols], elements
  std::string role;            ///< input, output or state (an activation between stages is state)
};

/// The stages' parts of a composed graph, each as text in the stages' order: the symbol and
/// schedule entries ("a: 1, b: 2"), the tensor and stream declaration lines, the op lines.
struct ComposedStages {
  std::string symbols, schedule, decls, streams, ops;
};

/// The stages renamed (as composeGraph does) into parts that a graph whose own tensors are
/// `layerTensors` can take in; composeGraph is these parts under a header. Throws DiagError
/// G-120 as composeGraph.
ComposedStages composeStages(const std::set<std::string>& layerTensors, const std::vector<GraphStage>& stages);

/// The graph YAML text of all stages in order, named `name`, with `comment` lines at the top
/// (each written after "# "). Deterministic. Throws DiagError G-120 when a stage's text is
/// not a graph (no ops), a prefix is not an identifier or repeats, or a shared name is not a
/// layer tensor.
std::string composeGraph(const std::string& name, const std::vector<std::string>& comment,
                         const std::vector<LayerTensor>& tensors, const std::vector<GraphStage>& stages);

/// The layer's name of a stage tensor: its shared name, else <prefix>_<name>.
std::string stageTensorName(const GraphStage& s, const std::string& tensor);

/// A stage's input tensors (its builder's fixed or seeded inputs) under their layer names;
/// a shared one is dropped when `keepShared` is false (the layer provides it).
std::map<std::string, Matrix> stageInputs(const GraphStage& s, const std::map<std::string, Matrix>& in, bool keepShared);

}  // namespace stepgen
