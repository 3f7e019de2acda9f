// runSynth: the job list (one per distinct unit module and parameter set, one for the top),
// run side by side (fpga/synth_job.cpp), and the report.
#include "fpga/synth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "arch/config_layout.hpp"
#include "arch/unit_catalogue.hpp"
#include "emit/verilog_top.hpp"
#include "fpga/synth_job.hpp"
#include "support/files.hpp"

namespace fs = std::filesystem;

namespace stepgen {

namespace {

// Vendor data sheets: Xilinx DS180 (Artix-7 XC7A100T), DS923 (Virtex UltraScale+ XCVU9P),
// Lattice FPGA-DS-02008 (iCE40 UltraPlus UP5K), DS1040 (iCE40 HX8K). The first of a target
// is its default.
constexpr Part kParts[] = {
    {"xc7", "xc7a100t", 63400, 126800, 135, 240},
    {"xc7", "xc7a200t", 134600, 269200, 365, 740},
    {"xcup", "xcvu9p", 1182240, 2364480, 2160, 6840},
    {"ice40", "up5k", 5280, 5280, 30, 8},
    {"ice40", "hx8k", 7680, 7680, 32, 0},
};

const Part& partFor(const std::string& target, const std::string& name) {
  for (const Part& p : kParts)
    if (target == p.target && (name.empty() || name == p.name)) return p;
  std::string known;
  for (const Part& p : kParts)
    if (target == p.target) known += fmt::format("{}{}", known.empty() ? "" : ", ", p.name);
  if (known.empty()) throw std::invalid_argument(fmt::format("unknown target '{}' (xc7, xcup or ice40)", target));
  throw std::invalid_argument(fmt::format("unknown part '{}' for target {} ({})", name, target, known));
}

std::string paramText(const std::vector<TemplateParam>& ps) {
  std::string s;
  for (const TemplateParam& p : ps) s += fmt::format("{}{}={}", s.empty() ? "" : " ", p.name, p.value);
  return s;
}

SynthRow newRow(const std::string& unit, const std::string& module, const std::string& params,
                const std::string& status) {
  SynthRow r;
  r.unit = unit, r.module = module, r.params = params, r.status = status;
  return r;
}

// Applies the --set overrides of unit kind `kind` to its parameters. Throws
// std::invalid_argument for a malformed override, an unknown parameter or a value that is
// not a non-negative integer.
void applySets(const std::vector<std::string>& sets, const std::string& kind, std::vector<TemplateParam>& ps) {
  for (const std::string& s : sets) {
    const size_t dot = s.find('.'), eq = s.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      throw std::invalid_argument(fmt::format("--set {}: expected KIND.NAME=VALUE, e.g. cu.LANES=4", s));
    if (s.substr(0, dot) != kind) continue;
    const std::string name = s.substr(dot + 1, eq - dot - 1);
    auto it = std::find_if(ps.begin(), ps.end(), [&](const TemplateParam& p) { return p.name == name; });
    if (it == ps.end())
      throw std::invalid_argument(fmt::format("--set {}: unit kind {} has no parameter {} ({})", s, kind, name,
                                              paramText(ps)));
    const std::string v = s.substr(eq + 1);
    // Every template parameter is an integer; anything else would also reach the shell.
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(fmt::format("--set {}: the value must be a non-negative integer", s));
    it->value = v;
  }
}

}  // namespace

std::vector<SynthRow> cuPartRows(const SynthRow& cu) {
  std::map<std::string, std::string> p;
  for (size_t pos = 0; pos < cu.params.size();) {
    const size_t end = std::min(cu.params.find(' ', pos), cu.params.size());
    const std::string kv = cu.params.substr(pos, end - pos);
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) p[kv.substr(0, eq)] = kv.substr(eq + 1);
    pos = end + 1;
  }
  auto pick = [&](std::initializer_list<const char*> names) {
    std::string s;
    for (const char* n : names) {
      auto it = p.find(n);
      if (it == p.end())
        throw std::invalid_argument(fmt::format("compute unit parameters '{}' have no {}", cu.params, n));
      s += fmt::format("{}{}={}", s.empty() ? "" : " ", n, it->second);
    }
    return s;
  };
  const std::string bCopies = pick({"DYN"}) == "DYN=0" ? "1" : "2";
  // (sg_cu holds the addresses in flat-memory units only: sg_cu.sv's u_addr)
  const std::string hold = pick({"BANKED"}) == "BANKED=0" ? "1" : "0";
  std::vector<SynthRow> rows = {
      newRow("cu.mem", "sg_cu_mem", pick({"W", "LANES", "BUF_WORDS", "BANKED"}) + " B_COPIES=" + bCopies + " " + pick({"A_COPIES"}), ""),
      newRow("cu.addr", "sg_cu_addr", pick({"W", "LANES", "BUF_WORDS", "DYN", "A_COPIES"}) + " HOLD=" + hold, ""),
      newRow("cu.mac", "sg_cu_mac", pick({"LANES", "BF16", "NEAR_FAR"}), ""),
      newRow("cu.word", "sg_cu_word", pick({"W", "DYN", "ATTN", "SILU", "MUL", "NEAR_FAR", "TOPK"}), ""),
      newRow("cu.rowred", "sg_cu_rowred", pick({"W", "ATTN", "NEAR_FAR"}), "")};
  for (SynthRow& r : rows) r.count = cu.count;
  return rows;
}

// synthCsv's columns.
constexpr const char* kCsvHeader =
    "arch,target,unit,luts,ffs,carries,dsps,brams,lutrams,logic_levels,fmax_mhz,synth_seconds,"
    "count,module,params,status,part,pnr_status,pnr_lcs,pnr_rams,pnr_seconds,lut_levels";

SynthRow fabricRow(const std::vector<SynthRow>& rows, bool overridden) {
  SynthRow fabric = newRow("fabric", "", "", overridden ? "overridden" : "ok");
  for (const SynthRow& row : rows) {
    // the wrapper is not part of the fabric; a compute unit's parts are counted in its row
    if (row.unit == "axi" || row.unit.rfind("cu.", 0) == 0) continue;
    fabric.seconds += row.seconds;
    if (overridden) continue;
    SynthCounts& t = fabric.c;
    t.luts += row.count * row.c.luts, t.ffs += row.count * row.c.ffs, t.carries += row.count * row.c.carries;
    t.dsps += row.count * row.c.dsps, t.brams += row.count * row.c.brams, t.lutrams += row.count * row.c.lutrams;
    t.logicLevels = std::max(t.logicLevels, row.c.logicLevels);
    t.lutLevels = std::max(t.lutLevels, row.c.lutLevels);
    if (row.status == "skipped" || row.status == "flat-memory") {
      if (fabric.status == "ok") fabric.status = "partial";
    } else if (row.status != "ok") {
      fabric.status = "incomplete";
    }
  }
  return fabric;
}

bool SynthReport::overflows() const {
  const SynthCounts& f = rows.back().c;
  return f.luts > partLuts || f.ffs > partFfs || f.brams > partBrams || f.dsps > partDsps;
}

SynthReport runSynth(const SynthOptions& o) {
  const Part& part = partFor(o.target, o.part);
  if (o.pnr && o.target != "ice40")
    throw std::invalid_argument(fmt::format("--pnr: place and route runs for ice40 only (nextpnr-ice40), not {}", o.target));
  const ArchModel a = loadArch(o.archPath);
  if (a.unbounded)
    throw DiagError("A-112", a.loc, fmt::format("architecture '{}' is unbounded (grid: unbounded): it has no RTL to "
                                                "synthesize", a.name));
  const UnitCatalogue cat(a);
  const fs::path rtl = fs::path(o.outDir) / "rtl";
  SynthReport r{a.name, o.target, part.name, part.luts, part.ffs, part.dsps, part.brams, {}};
  // One job per unit kind: every unit of a kind has the same parameters (the arch sets them
  // per kind), so one synthesis stands for all its instances.
  std::map<UnitKind, size_t> rowOf;
  std::string blackboxes;
  for (UnitId u : cat.units()) {
    auto it = rowOf.find(cat.kind(u));
    if (it != rowOf.end()) {
      r.rows[it->second].count++;
      continue;
    }
    const char* module = UnitCatalogue::moduleName(cat.kind(u));
    const std::string kind = cat.instanceName(u).substr(2, 2);  // u_cu_x1_y0 -> cu
    rowOf[cat.kind(u)] = r.rows.size();
    std::vector<TemplateParam> ps = cat.resolvedParams(u);
    applySets(o.sets, kind, ps);
    r.rows.push_back(newRow(kind, module, paramText(ps), ""));
    blackboxes += fmt::format("{}{}", blackboxes.empty() ? "" : " ", module);
  }
  for (const std::string& s : o.sets)
    if (std::none_of(r.rows.begin(), r.rows.end(), [&](const SynthRow& row) { return s.rfind(row.unit + ".", 0) == 0; }))
      throw std::invalid_argument(fmt::format("--set {}: architecture '{}' has no such unit kind (ag, cu, mu)", s, a.name));
  if (o.cuParts) {
    auto cu = std::find_if(r.rows.begin(), r.rows.end(), [](const SynthRow& row) { return row.unit == "cu"; });
    if (cu == r.rows.end()) throw std::invalid_argument(fmt::format("--cu-parts: architecture '{}' has no compute unit", a.name));
    const std::vector<SynthRow> parts = cuPartRows(*cu);
    r.rows.insert(cu + 1, parts.begin(), parts.end());
  }
  r.rows.push_back(newRow("top", "sg_top", "", ""));
  r.rows.push_back(newRow("axi", "sg_axi_top", "", ""));  // the wrapper around sg_top (docs/axi.md)
  for (const std::string& name : o.only)
    if (std::none_of(r.rows.begin(), r.rows.end(), [&](const SynthRow& row) { return row.unit == name; }))
      throw std::invalid_argument(fmt::format(
          "--only {}: architecture '{}' has no such row (ag, cu, mu, top, axi; with --cu-parts cu.mem, cu.addr, "
          "cu.mac, cu.word, cu.rowred)", name, a.name));
  // The fabric's Verilog, written only once the options are known to be good.
  fs::create_directories(rtl);
  std::string filelist;
  for (const RtlFile& f : emitFabric(a, buildConfigLayout(a), stepgenRoot() + "/rtl_templates")) {
    writeFile(rtl / f.name, f.text);
    filelist += f.name + "\n";
  }
  writeFile(rtl / "filelist.f", filelist);
  std::vector<size_t> todo;  // the rows Yosys runs, in row order
  for (size_t i = 0; i < r.rows.size(); ++i) {
    SynthRow& row = r.rows[i];
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), row.unit) == o.only.end()) {
      row.status = "skipped";
      continue;
    }
    // A flat compute-unit memory (BANKED = 0: the arch's, or --set's) has 2W + 2 LANES read
    // ports: Yosys turns it into flip-flops and runs out of memory or time (docs/fpga.md),
    // so it is not tried.
    if (cuParamIs(row, "BANKED", "0")) {
      row.status = "flat-memory";
      continue;
    }
    todo.push_back(i);
  }
  // o.jobs workers take the next row each; every job writes files of its own row only.
  std::atomic<size_t> next{0};
  std::mutex lock;
  std::exception_ptr failure;
  auto say = [&](const std::string& line) {
    const std::lock_guard<std::mutex> g(lock);
    std::cerr << line << std::flush;
  };
  auto worker = [&] {
    try {
      for (size_t k; (k = next++) < todo.size();) {
        SynthRow& row = r.rows[todo[k]];
        say(fmt::format("stepgen synth: {} ({}) started, job {} of {}\n", row.unit, row.module, k + 1, todo.size()));
        runSynthJob(rtl, row.unit == "top" ? blackboxes : row.unit == "axi" ? "sg_top" : "", o, row);
        if (o.pnr && row.status == "ok" && row.unit != "top" && row.unit != "axi" && row.unit.rfind("cu.", 0) != 0)
          runPnrJob(rtl, o, part, row);
        say(fmt::format("stepgen synth: {} {}, {:.1f} s of Yosys\n", row.unit, row.cached ? "ok (cached)" : row.status,
                        row.seconds));
      }
    } catch (...) {
      const std::lock_guard<std::mutex> g(lock);
      if (!failure) failure = std::current_exception();
      next = todo.size();  // the other workers stop after their job
    }
  };
  std::vector<std::thread> workers;
  for (int j = 0; j < std::max(1, o.jobs); ++j) workers.emplace_back(worker);
  for (std::thread& t : workers) t.join();
  if (failure) std::rethrow_exception(failure);
  // With --set the units are not the arch's: the fabric row keeps only the seconds.
  r.rows.push_back(fabricRow(r.rows, !o.sets.empty()));
  return r;
}

std::string synthTable(const SynthReport& r) {
  std::string s = fmt::format("# stepgen synth: architecture '{}', target {}, part {}\n", r.arch, r.target, r.part);
  s += fmt::format("{:<9} {:>5} {:>9} {:>9} {:>7} {:>5} {:>7} {:>8} {:>6} {:>4} {:>9}  {}\n", "unit", "count", "LUT",
                   "FF", "carry", "DSP", "BRAM", "LUT-RAM", "levels", "LUTs", "yosys s", "status / parameters");
  for (const SynthRow& row : r.rows) {
    const bool ok = row.status == "ok" || row.unit == "fabric";
    s += fmt::format("{:<9} {:>5} {:>9} {:>9} {:>7} {:>5} {:>7.1f} {:>8} {:>6} {:>4} {:>9.1f}  {}{}\n", row.unit,
                     row.count, ok ? std::to_string(row.c.luts) : "-", ok ? std::to_string(row.c.ffs) : "-",
                     row.c.carries, row.c.dsps, row.c.brams, row.c.lutrams, row.c.logicLevels, row.c.lutLevels,
                     row.seconds, row.cached ? "ok (cached)" : row.status, row.params.empty() ? "" : " " + row.params);
    if (row.status == "flat-memory")
      s += fmt::format("{:<9} not synthesized: compute_unit.memory is flat (2W + 2 lanes read ports; "
                       "`memory: banked` needs lanes <= W)\n", "");
    if (row.pnrStatus == "placed")
      s += fmt::format("{:<9} place and route ({}, out of context): Fmax {:.1f} MHz, {} logic cells, {} block RAMs, "
                       "{:.1f} s\n", "", r.part, row.fmaxMhz, row.pnrLcs, row.pnrRams, row.pnrSeconds);
    else if (row.pnrLcs > 0)
      s += fmt::format("{:<9} place and route ({}): {}, {} logic cells needed\n", "", r.part, row.pnrStatus, row.pnrLcs);
    else if (!row.pnrStatus.empty())
      s += fmt::format("{:<9} place and route ({}): {}\n", "", r.part, row.pnrStatus);
  }
  const SynthCounts& f = r.rows.back().c;
  s += fmt::format("per instance for units and top; axi = the AXI wrapper's own logic (sg_top a black box); cu.* = "
                   "the compute unit's parts, each out of context; fabric = "
                   "top + count x unit (without axi and cu.*); levels = combinational cells on the longest path, "
                   "LUTs = the LUTs among them. {} ({} LUT, {} FF, {} BRAM, {} DSP): "
                   "{:.1f} % LUT, {:.1f} % FF, {:.1f} % BRAM, {:.1f} % DSP{}\n",
                   r.part, r.partLuts, r.partFfs, r.partBrams, r.partDsps, 100.0 * double(f.luts) / double(r.partLuts),
                   100.0 * double(f.ffs) / double(r.partFfs), r.partBrams > 0 ? 100.0 * f.brams / r.partBrams : 0.0,
                   r.partDsps > 0 ? 100.0 * double(f.dsps) / double(r.partDsps) : 0.0,
                   r.rows.back().status == "ok" ? "" : fmt::format(" ({}: not every row counted)", r.rows.back().status));
  return s;
}

std::string synthCsv(const SynthReport& r, bool header) {
  std::string s = header ? std::string(kCsvHeader) + "\n" : "";
  for (const SynthRow& row : r.rows) {
    // a partial fabric: the rows counted
    const bool ok = row.status == "ok" || row.status == "partial";
    auto n = [&](auto v) { return ok ? fmt::format("{}", v) : std::string(); };
    const bool placed = row.pnrStatus == "placed";
    auto p = [&](auto v) { return placed ? fmt::format("{}", v) : std::string(); };
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.1f},{},{},{},{},{},{},{},{},{},{}\n", r.arch, r.target, row.unit,
                     n(row.c.luts), n(row.c.ffs), n(row.c.carries), n(row.c.dsps), n(row.c.brams), n(row.c.lutrams),
                     n(row.c.logicLevels), placed ? fmt::format("{:.1f}", row.fmaxMhz) : "", row.seconds, row.count,
                     row.module, row.params, row.status, r.part, row.pnrStatus, row.pnrLcs > 0 ? std::to_string(row.pnrLcs) : "", p(row.pnrRams),
                     row.pnrStatus.empty() ? "" : fmt::format("{:.1f}", row.pnrSeconds), n(row.c.lutLevels));
  }
  return s;
}

std::string synthJson(const SynthReport& r) {
  nlohmann::json j;
  j["arch"] = r.arch;
  j["target"] = r.target;
  j["part"] = {{"name", r.part}, {"luts", r.partLuts}, {"ffs", r.partFfs}, {"brams", r.partBrams}, {"dsps", r.partDsps}};
  j["fabric_status"] = r.rows.back().status;
  j["overflows_part"] = r.overflows();
  for (const SynthRow& row : r.rows)
    j["rows"].push_back({{"unit", row.unit},
                         {"module", row.module},
                         {"params", row.params},
                         {"count", row.count},
                         {"status", row.status},
                         {"cached", row.cached},
                         {"luts", row.c.luts},
                         {"ffs", row.c.ffs},
                         {"carries", row.c.carries},
                         {"dsps", row.c.dsps},
                         {"brams", row.c.brams},
                         {"lutrams", row.c.lutrams},
                         {"logic_levels", row.c.logicLevels},
                         {"lut_levels", row.c.lutLevels},
                         {"synth_seconds", row.seconds},
                         {"pnr_status", row.pnrStatus},
                         {"fmax_mhz", row.fmaxMhz},
                         {"pnr_lcs", row.pnrLcs},
                         {"pnr_rams", row.pnrRams},
                         {"pnr_seconds", row.pnrSeconds}});
  return j.dump(2) + "\n";
}

}  // namespace stepgen
