#include "arch/config_layout.hpp"

#include "arch/unit_catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace stepgen {

namespace {

int bitsFor(int64_t values) {  // bits to hold 0..values-1
  int b = 0;
  while ((int64_t(1) << b) < values) ++b;
  return std::max(b, 1);
}

struct LayoutBuilder {
  KindLayout k;
  void add(const std::string& name, int width) {
    k.fields.push_back({name, k.bits, width});
    k.bits += width;
  }
  void ports(int n, int srcBits) {
    k.inPorts = n;
    for (int p = 0; p < n; ++p) {
      add(fmt::format("in{}_src", p), srcBits);
      add(fmt::format("in{}_stopmap", p), 24);  // 8 entries x 3 bits: out stop per in stop
    }
  }
};

}  // namespace

const char* configKindPrefix(UnitKind k) {
  switch (k) {
    case UnitKind::AddressGen: return "AG";
    case UnitKind::Compute: return "CU";
    case UnitKind::Memory: return "MU";
    default: return "NONE";
  }
}

const ConfigField& KindLayout::field(const std::string& name) const {
  for (const auto& f : fields)
    if (f.name == name) return f;
  throw std::out_of_range("internal error: no config field " + name);
}

const KindLayout& ConfigLayout::kindLayout(UnitKind k) const {
  switch (k) {
    case UnitKind::AddressGen: return ag;
    case UnitKind::Compute: return cu;
    case UnitKind::Memory: return mu;
    default: throw std::out_of_range("internal error: empty unit has no layout");
  }
}

const UnitConfigSlot* ConfigLayout::slot(int unit) const {
  for (const auto& s : slots)
    if (s.unit == unit) return &s;
  return nullptr;
}

int64_t ConfigLayout::bitOf(int unit, int ctx, const ConfigField& f) const {
  const UnitConfigSlot* s = slot(unit);
  if (!s) throw std::out_of_range("internal error: unit has no configuration");
  return int64_t(s->wordBase) * 32 + int64_t(ctx) * kindLayout(s->kind).bits + f.lsb;
}

ConfigLayout buildConfigLayout(const ArchModel& a) {
  ConfigLayout l;
  l.contexts = a.contexts;
  const UnitCatalogue cat(a);
  l.srcBits = cat.sourceSelectBits();
  l.bufAddrBits = bitsFor(a.cu.bufferBytes / 4);
  l.muAddrBits = bitsFor(a.mu.capacityBytes / 4);
  const int ab = a.offchip.addressBits;
  // An unbounded fabric is never built: its counts get 32 bits so that no real size is cut
  // off (the built fabric's widths are those of the RTL templates).
  const int cnt = a.unbounded ? 32 : 16, small = a.unbounded ? 32 : 8;

  LayoutBuilder ag{{UnitKind::AddressGen, {}, 0, 0}};
  ag.add("enable", 1);
  ag.add("store", 1);
  ag.add("rank", 3);
  ag.add("base", ab);
  for (int i = 0; i < 4; ++i) ag.add(fmt::format("n{}", i), cnt);
  for (int i = 0; i < 4; ++i) ag.add(fmt::format("s{}", i), ab);
  ag.add("rows", cnt);
  ag.add("ppr", cnt);
  ag.add("row_stride", ab);
  // RandomOffChipLoad (sg_ag.sv header): in0 carries indices; tile base += index*idx_stride.
  ag.add("random", 1);
  ag.add("per_group", 1);   // one walk per group of in0 (stop >= 1), index from its first beat
  ag.add("idx_word", a.unbounded ? 32 : 6);  // word of the address beat that holds the uint32 index
  ag.add("idx_stride", ab); // bytes per index step
  ag.add("count", 1);       // a run load: level 0's count is word cnt_word of each address element
  ag.add("cnt_word", a.unbounded ? 32 : 6);
  ag.ports(UnitCatalogue::inPorts(UnitKind::AddressGen), l.srcBits);   // in1: the address stream of a random store (in0 = data)
  l.ag = ag.k;

  LayoutBuilder cu{{UnitKind::Compute, {}, 0, 0}};
  cu.add("enable", 1);
  cu.add("func", 5);      // CuFunc (config_layout.hpp); 7..10 need sg_cu DYN = 1, 12..16 and 23 ATTN = 1
  cu.add("accum_b", 3);
  cu.add("mn", 32);
  cu.add("k", cnt);
  cu.add("log2n", 5);
  cu.add("passes", cnt);
  cu.add("a_beats", cnt);
  cu.add("b_beats", cnt);
  cu.add("o_beats", cnt);
  for (const char* n : {"a_base0", "a_base1", "b_base0", "b_base1", "o_base0", "o_base1"})
    cu.add(n, l.bufAddrBits);
  // Dynamic tiles and transposed weights (sg_cu.sv header): all 0 = the static behaviour.
  cu.add("dyn_m", 1);     // matmul: M from the a tile's beats; accum: tile length from `last`
  cu.add("bt", 1);        // matmul: in1 carries b transposed (N x K), N = field n
  cu.add("n", cnt);        // N for bt (and for dyn_m with bt); need not be a power of two.
                          // Parallelize: the number of outputs n; select: its initial tokens
  cu.add("idx_word", a.unbounded ? 32 : 6);  // rowscale: word of the in1 beat that holds the row's scalar; select: the value.
                          // Parallelize: this unit's output index i (< 64)
  cu.ports(UnitCatalogue::inPorts(UnitKind::Compute), l.srcBits);
  l.cu = cu.k;

  LayoutBuilder mu{{UnitKind::Memory, {}, 0, 0}};
  mu.add("enable", 1);
  mu.add("b", 3);
  mu.add("repeat", cnt);
  mu.add("half_words", l.muAddrBits);
  // Route mode (sg_route inside sg_mu, arch memory_unit.route; rtl_templates/sg_mu.sv
  // header): all 0 = the buffer behaviour. in0 = token rows, in1 = routing rows.
  mu.add("route", 1);       // 1 = this context runs sg_route
  mu.add("n_exp", small);       // experts E (1..128)
  mu.add("k", 4);           // slots per token (1..min(8, W/2))
  mu.add("tile_rows", small);   // token tile tb (0 = dynamic, Promote; 1..64 = Reshape)
  mu.add("row_beats", small);   // beats per token row (route data mode; combine mode)
  mu.add("out_meta", 1);    // 0 = data output, 1 = meta output
  // Combine mode (sg_combine inside sg_mu, same arch flag): in0 = expert output rows, in1 =
  // sg_route's meta entries; uses k and row_beats. Never together with route.
  mu.add("combine", 1);     // 1 = this context runs sg_combine
  // Carry across sections (buffer side; docs/hardware.md section 2): keep = store every beat
  // of the input until DONE and emit nothing; replay = emit the beats the last keep context
  // stored, then DONE. The buffer contents outlive the context switch.
  mu.add("keep", 1);
  mu.add("replay", 1);
  mu.ports(UnitCatalogue::inPorts(UnitKind::Memory), l.srcBits);   // in1: routing rows (route mode) or meta entries (combine mode)
  l.mu = mu.k;

  int word = 0;
  for (size_t u = 0; u < a.units.size(); ++u) {
    if (a.units[u].kind == UnitKind::Empty) continue;
    int bits = l.kindLayout(a.units[u].kind).bits * l.contexts;
    int words = (bits + 31) / 32;
    l.slots.push_back({int(u), a.units[u].kind, word, words});
    word += words;
  }
  l.unitWords = word;
  l.totalWords = word + 2;
  return l;
}

std::string emitConfigPackage(const ConfigLayout& l) {
  std::string s =
      "// Generated by stepgen from the architecture: configuration field offsets.\n"
      "// One context's vector per unit kind; context c occupies bits [c*<KIND>_BITS +: <KIND>_BITS].\n"
      "// Every field gets _LSB and _W constants; units read only the ones they need, hence the\n"
      "// UNUSEDPARAM waiver.\n"
      "/* verilator lint_off UNUSEDPARAM */\n"
      "package sg_cfg_pkg;\n";
  s += fmt::format("  localparam int CONTEXTS = {};\n", l.contexts);
  s += fmt::format("  localparam int SRC_BITS = {};\n", l.srcBits);
  s += fmt::format("  localparam int BUF_ADDR_BITS = {};\n", l.bufAddrBits);
  s += fmt::format("  localparam int MU_ADDR_BITS = {};\n", l.muAddrBits);
  s += fmt::format("  localparam int SECTIONS_LOADED_WORD = {};  // fabric-wide words (sg_sec_seq)\n", l.sectionsLoadedWord());
  s += fmt::format("  localparam int SECTIONS_WORD = {};\n", l.sectionsWord());
  for (const KindLayout* k : {&l.ag, &l.cu, &l.mu}) {
    std::string p = configKindPrefix(k->kind);
    s += fmt::format("  localparam int {}_BITS = {};\n", p, k->bits);
    for (const auto& f : k->fields) {
      std::string n = f.name;
      std::transform(n.begin(), n.end(), n.begin(), ::toupper);
      s += fmt::format("  localparam int {}_{}_LSB = {};\n", p, n, f.lsb);
      s += fmt::format("  localparam int {}_{}_W = {};\n", p, n, f.width);
    }
  }
  s += fmt::format("  localparam int CU_FUNC_MATMUL = {};\n", int(CuFunc::Matmul));
  s += fmt::format("  localparam int CU_FUNC_SILU = {};\n", int(CuFunc::Silu));
  s += fmt::format("  localparam int CU_FUNC_MUL = {};\n", int(CuFunc::Mul));
  s += fmt::format("  localparam int CU_FUNC_ADD = {};\n", int(CuFunc::Add));
  s += fmt::format("  localparam int CU_FUNC_ACCUM = {};\n", int(CuFunc::Accum));
  s += fmt::format("  localparam int CU_FUNC_RETILE = {};\n", int(CuFunc::Retile));
  s += fmt::format("  localparam int CU_FUNC_ROWSCALE = {};\n", int(CuFunc::RowScale));
  s += fmt::format("  localparam int CU_FUNC_SCAN = {};\n", int(CuFunc::Scan));
  s += fmt::format("  localparam int CU_FUNC_EXPAND = {};\n", int(CuFunc::Expand));
  s += fmt::format("  localparam int CU_FUNC_PARALLELIZE = {};\n", int(CuFunc::Parallelize));
  s += fmt::format("  localparam int CU_FUNC_SUB = {};\n", int(CuFunc::Sub));
  s += fmt::format("  localparam int CU_FUNC_EXP = {};\n", int(CuFunc::Exp));
  s += fmt::format("  localparam int CU_FUNC_RECIP = {};\n", int(CuFunc::Recip));
  s += fmt::format("  localparam int CU_FUNC_ROWMAX = {};\n", int(CuFunc::RowMax));
  s += fmt::format("  localparam int CU_FUNC_ROWSUM = {};\n", int(CuFunc::RowSum));
  s += fmt::format("  localparam int CU_FUNC_ACCUM_MAX = {};\n", int(CuFunc::AccumMax));
  s += fmt::format("  localparam int CU_FUNC_SCAN_MAX = {};\n", int(CuFunc::ScanMax));
  s += fmt::format("  localparam int CU_FUNC_ACCUM_RESCALE = {};\n", int(CuFunc::AccumRescale));
  s += fmt::format("  localparam int CU_FUNC_SCAN_MAX_EXCL = {};\n", int(CuFunc::ScanMaxExcl));
  s += fmt::format("  localparam int CU_FUNC_PARTITION = {};\n", int(CuFunc::Partition));
  s += fmt::format("  localparam int CU_FUNC_MERGE = {};\n", int(CuFunc::Merge));
  s += fmt::format("  localparam int CU_FUNC_SELECT = {};\n", int(CuFunc::Select));
  s += fmt::format("  localparam int CU_FUNC_RSQRT = {};\n", int(CuFunc::Rsqrt));
  s += fmt::format("  localparam int CU_FUNC_TOPK = {};\n", int(CuFunc::TopK));
  s += fmt::format("  localparam int CU_FUNC_TOPK_LOGITS = {};\n", int(CuFunc::TopKLogits));
  s += "endpackage\n/* verilator lint_on UNUSEDPARAM */\n";
  return s;
}

}  // namespace stepgen
