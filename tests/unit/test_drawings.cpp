// Drawings (driver/drawings.hpp): the graph DOT and the per-section fabric SVGs are
// well-formed and name what they show. SwiGLU on arch/small.yaml runs in 3 sections
// (test_sections.cpp).
#include <catch2/catch.hpp>

#include <regex>
#include <vector>

#include "driver/drawings.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {

// Tags balance: every <name ...> is closed by </name> in order, <name .../> closes itself.
bool wellFormed(const std::string& s) {
  std::vector<std::string> open;
  size_t i = 0;
  while ((i = s.find('<', i)) != std::string::npos) {
    size_t e = s.find('>', i);
    if (e == std::string::npos) return false;
    std::string tag = s.substr(i + 1, e - i - 1);
    i = e + 1;
    if (tag.empty()) return false;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty();
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("drawings: the graph DOT has a cluster per section and every op and stream", "[drawings]") {
  const CompileResult c = compileGraph(root() + "/arch/small.yaml", root() + "/examples/swiglu/graph.yaml");
  REQUIRE(c.sections.sections == 3);
  const std::string dot = graphDot(c);
  CHECK(dot.rfind("digraph \"swiglu\" {", 0) == 0);
  CHECK(count(dot, "subgraph cluster_s") == 3);
  CHECK(count(dot, "{") == count(dot, "}"));
  for (const Op& o : c.graph.ops) CHECK(dot.find("label=\"" + o.name + "\\n") != std::string::npos);
  size_t edges = 0;
  for (const Stream& s : c.graph.streams) edges += s.consumers.size();
  CHECK(count(dot, " -> ") == edges);
  CHECK(dot == graphDot(c));
}

TEST_CASE("drawings: each section's fabric SVG names its ops and draws its routes", "[drawings]") {
  const CompileResult c = compileGraph(root() + "/arch/small.yaml", root() + "/examples/swiglu/graph.yaml");
  for (int k = 0; k < c.sections.sections; ++k) {
    const std::string svg = fabricSvg(c, k);
    CHECK(svg.rfind("<svg ", 0) == 0);
    CHECK(svg.size() > 7);
    CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
    CHECK(wellFormed(svg));
    for (size_t i = 0; i < c.graph.ops.size(); ++i) {
      if (c.mapping.ops[i].unit < 0) continue;  // absorbed: links and stop maps
      const bool named = svg.find(">" + c.graph.ops[i].name + "<") != std::string::npos;
      CHECK(named == (c.mapping.ops[i].ctx == k));
    }
    size_t routes = 0;
    for (const Route& r : c.mapping.routes) routes += r.ctx == k;
    CHECK(count(svg, "<line ") == routes);
    CHECK(count(svg, "<rect ") == c.arch.units.size());
    CHECK(svg == fabricSvg(c, k));
  }
  CHECK_THROWS_AS(fabricSvg(c, 3), std::out_of_range);
}
