// graphDot, fabricSvg: pictures of a compiled program (driver/drawings.hpp).
#include "driver/drawings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "arch/unit_catalogue.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace {

const char* sectionColour(int s) {
  static const char* palette[] = {"#cfe2ff", "#d1f2d1", "#ffe5b4", "#f8d0e0", "#e0d4f7", "#fff3b0", "#cdeff0", "#e8e8e8"};
  return palette[size_t(s) % (sizeof palette / sizeof palette[0])];
}

// Text inside a quoted DOT string or an XML text/attribute.
std::string escape(const std::string& s, bool xml) {
  std::string o;
  for (char ch : s) {
    if (xml && ch == '&') o += "&amp;";
    else if (xml && ch == '<') o += "&lt;";
    else if (xml && ch == '>') o += "&gt;";
    else if (ch == '"') o += xml ? "&quot;" : "\\\"";
    else if (!xml && ch == '\\') o += "\\\\";
    else o += ch;
  }
  return o;
}

// "name\nKind(fn)" for a DOT label (escaped, with DOT's line break).
std::string opLabel(const Op& o) {
  std::string k = opKindName(o.kind);
  auto fn = o.attrs.find("fn");
  if (fn != o.attrs.end() && !fn->second.isList) k += "(" + fn->second.scalar + ")";
  return escape(o.name, false) + "\\n" + escape(k, false);
}

int sectionOf(const CompileResult& c, size_t op) {
  return op < c.sections.sectionOf.size() ? c.sections.sectionOf[op] : 0;
}

}  // namespace

std::string graphDot(const CompileResult& c) {
  const StepGraph& g = c.graph;
  std::string s = fmt::format("digraph \"{}\" {{\n  rankdir=LR;\n", escape(g.name, false));
  s += "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
  s += "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (int k = 0; k < c.sections.sections; ++k) {
    s += fmt::format("  subgraph cluster_s{} {{\n    label=\"section {} (context {})\";\n    style=dashed;\n", k, k,
                     k % c.arch.contexts);
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (sectionOf(c, i) == k)
        s += fmt::format("    op{} [label=\"{}\", fillcolor=\"{}\"];\n", i, opLabel(g.ops[i]),
                         sectionColour(k));
    s += "  }\n";
  }
  for (const Stream& st : g.streams) {
    if (!st.producer.valid()) continue;
    for (OpId to : st.consumers)
      s += fmt::format("  op{} -> op{} [label=\"{}\"];\n", st.producer.v, to.v, escape(st.name, false));
  }
  return s + "}\n";
}

std::string fabricSvg(const CompileResult& c, int section) {
  if (section < 0 || section >= c.sections.sections) throw std::out_of_range("no such section");
  const ArchModel& a = c.arch;
  const UnitCatalogue cat(a);
  constexpr int W = 170, H = 84, M = 20, TOP = 40;
  int cols = 0, rows = 0;
  for (const auto& u : a.units) cols = std::max(cols, u.x + 1), rows = std::max(rows, u.y + 1);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"Helvetica\" font-size=\"11\">\n",
      2 * M + cols * W, TOP + M + rows * H);
  s += "<defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" orient=\"auto\">"
       "<path d=\"M0,0 L8,4 L0,8 z\" fill=\"#333\"/></marker></defs>\n";
  s += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"14\">{}: section {} of {}, context {} of {} ({})</text>\n", M,
                   escape(c.graph.name, true), section, c.sections.sections, section % a.contexts, a.contexts,
                   escape(a.name, true));
  auto cx = [&](int u) { return M + a.units[size_t(u)].x * W + W / 2; };
  auto cy = [&](int u) { return TOP + a.units[size_t(u)].y * H + H / 2; };
  for (size_t u = 0; u < a.units.size(); ++u) {
    const int x = M + a.units[u].x * W + 6, y = TOP + a.units[u].y * H + 6;
    if (a.units[u].kind == UnitKind::Empty) {
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbb\" "
                       "stroke-dasharray=\"4,3\"/>\n",
                       x, y, W - 12, H - 12);
      continue;
    }
    std::string op;
    for (size_t i = 0; i < c.mapping.ops.size(); ++i) {
      const OpPlacement& p = c.mapping.ops[i];
      if (p.ctx != section) continue;
      const bool here = p.unit == int(u) || p.auxUnit == int(u) ||
                        std::find(p.extraUnits.begin(), p.extraUnits.end(), int(u)) != p.extraUnits.end();
      if (here) op = c.graph.ops[i].name;
    }
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"{}\" stroke=\"#555\"/>\n", x, y,
                     W - 12, H - 12, op.empty() ? "#f7f7f7" : sectionColour(section));
    s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">{}</text>\n", x + 6, y + 16,
                     escape(cat.instanceName({int(u)}), true));
    if (!op.empty())
      s += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", x + 6, y + 36, escape(op, true));
  }
  for (const Route& r : c.mapping.routes) {
    if (r.ctx != section) continue;
    const int off = 6 * (r.dstPort * 2 - 1);  // keep the two ports' links apart
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\" stroke-width=\"1.5\" "
                     "marker-end=\"url(#arrow)\"><title>{}</title></line>\n",
                     cx(r.srcUnit), cy(r.srcUnit) + 14, cx(r.dstUnit) + off, cy(r.dstUnit) + 14,
                     escape(c.graph.stream(r.stream).name, true));
  }
  return s + "</svg>\n";
}

void writeDrawings(const CompileResult& c, const std::filesystem::path& dir) {
  writeFile(dir / "graph.dot", graphDot(c));
  for (int k = 0; k < c.sections.sections; ++k) writeFile(dir / fmt::format("fabric_s{}.svg", k), fabricSvg(c, k));
  if (std::system("command -v dot > /dev/null 2>&1") == 0) {
    const std::string cmd = fmt::format("dot -Tsvg '{}' -o '{}' > /dev/null 2>&1", (dir / "graph.dot").string(),
                                        (dir / "graph.svg").string());
    if (std::system(cmd.c_str()) != 0) std::filesystem::remove(dir / "graph.svg");
  }
}

}  // namespace stepgen
