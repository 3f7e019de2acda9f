#include "driver/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "support/files.hpp"

namespace fs = std::filesystem;

namespace stepgen {

bool bytesEqual(const VerifyReport& r) {
  const TimingResult& t = r.compared().timing;
  return int64_t(r.rtl.readBytes) == t.offchipReadBytes && int64_t(r.rtl.writeBytes) == t.offchipWriteBytes;
}

bool cyclesWithin(const VerifyReport& r) {
  return r.maxCycleErrorPercent <= 0 || std::fabs(r.cycleErrorPercent) <= r.maxCycleErrorPercent;
}

const char* verilatedName(const VerifyReport& r) { return r.hierarchical ? "hierarchical" : "flat"; }

bool passed(const VerifyReport& r) {
  if (r.model.timing.deadlock || (r.reference && !r.reference->ok())) return false;
  if (r.rtl.status.empty()) return true;  // model only
  return r.rtl.status == "ok" && r.outputsEqual && bytesEqual(r) && cyclesWithin(r) && axiPassed(r);
}

bool axiPassed(const VerifyReport& r) {
  return !r.axiRan || (r.axi.status == "ok" && r.axiMismatch.empty() && r.axi.readBytes == r.rtl.readBytes &&
                       r.axi.writeBytes == r.rtl.writeBytes);
}

namespace {

std::string sectionsLines(const VerifyReport& r) {
  std::string s = fmt::format("sections: {} ({} reloaded while running), {} B carried in memory units, {} B through DRAM\n",
                              r.sections, r.reloadedSections, r.carriedOnchipBytes, r.carriedDramBytes);
  const auto& ms = r.model.timing.sectionStart;
  for (size_t k = 0; k < r.rtl.sections.size() || k < ms.size(); ++k) {
    std::string rtl = k < r.rtl.sections.size() ? fmt::format("rtl start {} (beats {}..{})", r.rtl.sections[k].start,
                                                               r.rtl.sections[k].firstBeat, r.rtl.sections[k].lastBeat)
                                                : "rtl -";
    s += fmt::format("  section {}: {}, model start {}\n", k, rtl, k < ms.size() ? fmt::format("{}", ms[k]) : "-");
  }
  const std::vector<int64_t> sw = switchCycles(r.rtl);
  if (!sw.empty()) {
    int64_t sum = 0;
    for (int64_t x : sw) sum += x;
    s += fmt::format("  switch (last beat -> first beat of the next section): rtl mean {:.1f} cycles, max {}\n",
                     double(sum) / double(sw.size()), *std::max_element(sw.begin(), sw.end()));
  }
  s += fmt::format("  reload: {} configuration words written while running, {} cycles exposed (model: {} words, {} "
                   "cycles)\n",
                   r.rtl.reloadWrites, r.rtl.cfgWaitCycles, r.model.timing.reloadWords, r.model.timing.reloadExposedCycles);
  return s;
}

}  // namespace

std::string verdictText(const VerifyReport& r) {
  const auto& m = r.model;
  std::string s;
  s += fmt::format("model : {} cycles, off-chip {} B read + {} B written (cost model {} B), on-chip {} B, roofline {:.0f} cycles ({:.2f}x)\n",
                   m.timing.cycles, m.timing.offchipReadBytes, m.timing.offchipWriteBytes, m.offchipBytes, m.onchipBytes,
                   m.rooflineCycles, m.rooflineCycles > 0 ? double(m.timing.cycles) / m.rooflineCycles : 0.0);
  if (m.timing.deadlock) {
    s += "model : DEADLOCK; stuck streams:\n";
    for (const auto& x : m.timing.stuck) s += "  " + x + "\n";
  }
  if (r.reference)
    s += fmt::format("reference: max rel err {:.3e} vs tolerance {:.3e} over {} output(s): {}{}\n", r.reference->elements.maxRelErr,
                     r.reference->tolerance, r.reference->outputs, r.reference->ok() ? "within" : "OUTSIDE",
                     r.reference->elements.byRunning == 0
                         ? std::string()
                         : fmt::format(" ({} element(s) outside the tolerance, within the running error bound: at most {:.2f} "
                                       "of it)",
                                       r.reference->elements.byRunning, r.reference->elements.runningShare));
  if (r.rtl.status.empty()) return s + "rtl   : not run\n";
  if (r.rtl.status != "ok") {
    s += fmt::format("rtl   : {}\n", r.rtl.status);
    for (const auto& x : r.rtl.stuck) s += "  stuck: " + x.port + "\n";
    if (!r.firstMismatch.empty()) s += r.firstMismatch + "\n";
    return s + "verdict: FAIL\n";
  }
  s += fmt::format("rtl   : {} cycles, off-chip {} B read + {} B written, memory units held at most {} B, {:.0f} cycles/s, "
                   "build {:.1f} s ({})\n",
                   r.rtl.cycles, r.rtl.readBytes, r.rtl.writeBytes, r.rtl.muPeakBytes(), r.rtl.cyclesPerSecond, r.buildSeconds,
                   verilatedName(r));
  s += fmt::format("cycles: rtl {} vs model {}: {:+.2f} %{}\n", r.rtl.cycles, m.timing.cycles, r.cycleErrorPercent,
                   cyclesWithin(r) ? "" : fmt::format(", above the tolerance of {} %", r.maxCycleErrorPercent));
  if (r.rtlDecisions > 0)
    s += fmt::format("arbitration: {} merge decisions in the fabric, {} differ from the model's own{}\n", r.rtlDecisions,
                     r.differingDecisions,
                     r.replay ? fmt::format("; the model replayed the fabric's: {} cycles, rtl {:+.2f} %",
                                            r.replay->timing.cycles, r.replayCycleErrorPercent)
                              : "");
  const std::string under = r.replay ? " (under the fabric's merge decisions)" : "";
  s += r.outputsEqual ? "outputs: bit-exact" + under + "\n"
                      : fmt::format("outputs: MISMATCH{}, first at {}\n", under, r.firstMismatch);
  s += fmt::format("off-chip bytes: rtl {} model {}: {}\n", r.rtl.readBytes + r.rtl.writeBytes,
                   r.compared().timing.offchipReadBytes + r.compared().timing.offchipWriteBytes,
                   bytesEqual(r) ? "equal" : "DIFFER");
  if (r.sections > 1) s += sectionsLines(r);
  if (r.axiRan && r.axi.status == "ok")
    s += fmt::format("axi   : {} cycles through the AXI wrapper vs {} on flat ports ({:+.2f} %), configuration {} cycles "
                     "for {} words over AXI4-Lite{}, off-chip bytes {}, outputs {}\n",
                     r.axi.cycles, r.rtl.cycles,
                     r.rtl.cycles ? 100.0 * (double(r.axi.cycles) - double(r.rtl.cycles)) / double(r.rtl.cycles) : 0.0,
                     r.axi.configCycles, r.axi.configWords,
                     r.axi.reloadWrites ? fmt::format(" (+ {} reload words while running)", r.axi.reloadWrites) : "",
                     r.axi.readBytes == r.rtl.readBytes && r.axi.writeBytes == r.rtl.writeBytes ? "equal" : "DIFFER",
                     r.axiMismatch.empty() ? "bit-exact" : "MISMATCH, first at " + r.axiMismatch);
  else if (r.axiRan)
    s += fmt::format("axi   : {}: {}\n", r.axi.status, r.axiMismatch);
  s += fmt::format("verdict: {}\n", passed(r) ? "PASS" : "FAIL");
  return s;
}

std::vector<int64_t> switchCycles(const RunResult& r) {
  std::vector<int64_t> v;
  for (size_t k = 0; k + 1 < r.sections.size(); ++k)
    if (r.sections[k].lastBeat && r.sections[k + 1].firstBeat)
      v.push_back(int64_t(r.sections[k + 1].firstBeat) - int64_t(r.sections[k].lastBeat));
  return v;
}

void writeReportJson(const VerifyReport& r, const std::string& archName, const std::string& graphName,
                     const fs::path& p) {
  nlohmann::json j;
  j["arch"] = archName;
  j["graph"] = graphName;
  j["model"] = {{"cycles", r.model.timing.cycles},
                {"offchip_read_bytes", r.model.timing.offchipReadBytes},
                {"offchip_write_bytes", r.model.timing.offchipWriteBytes},
                {"offchip_bytes_cost_model", r.model.offchipBytes},
                {"onchip_bytes", r.model.onchipBytes},
                {"flops", r.model.flops},
                {"roofline_cycles", r.model.rooflineCycles},
                {"deadlock", r.model.timing.deadlock},
                {"stuck", r.model.timing.stuck},
                {"wall_seconds", r.model.wallSeconds}};
  std::vector<std::string> stuck;
  for (const StuckPort& x : r.rtl.stuck) stuck.push_back(x.port);
  j["rtl"] = {{"ran", !r.rtl.status.empty() && r.rtl.status != "build-failed"},
              {"status", r.rtl.status},
              {"cycles", r.rtl.cycles},
              {"offchip_read_bytes", r.rtl.readBytes},
              {"offchip_write_bytes", r.rtl.writeBytes},
              {"wall_seconds", r.rtl.wallSeconds},
              {"cycles_per_second", r.rtl.cyclesPerSecond},
              {"build_seconds", r.buildSeconds},
              {"verilated", verilatedName(r)},
              {"stuck", stuck},
              {"mu_peak_bytes", r.rtl.muPeakBytes()}};
  if (r.axiRan)
    j["axi"] = {{"status", r.axi.status},
                {"cycles", r.axi.cycles},
                {"config_cycles", r.axi.configCycles},
                {"offchip_read_bytes", r.axi.readBytes},
                {"offchip_write_bytes", r.axi.writeBytes},
                {"outputs_equal", r.axi.status == "ok" && r.axiMismatch.empty()},
                {"first_mismatch", r.axiMismatch},
                {"build_seconds", r.axiBuildSeconds}};
  j["arbitration"] = {{"rtl_decisions", r.rtlDecisions},
                      {"differing_decisions", r.differingDecisions},
                      {"replayed", r.replay.has_value()},
                      {"replay_cycles", r.replay ? r.replay->timing.cycles : 0},
                      {"replay_cycle_error_percent", r.replayCycleErrorPercent}};
  j["outputs_equal"] = r.outputsEqual;
  j["first_mismatch"] = r.firstMismatch;
  j["cycle_error_percent"] = r.cycleErrorPercent;
  if (r.reference)
    j["reference"] = {{"max_rel_err", r.reference->elements.maxRelErr},
                      {"tolerance", r.reference->tolerance},
                      {"outputs", r.reference->outputs},
                      {"within_running_bound_only", r.reference->elements.byRunning},
                      {"outside", r.reference->elements.outside},
                      {"within", r.reference->ok()}};
  j["sections"] = {{"count", r.sections},
                   {"reloaded", r.reloadedSections},
                   {"carried_dram_bytes", r.carriedDramBytes},
                   {"carried_onchip_bytes", r.carriedOnchipBytes},
                   {"model_section_start", r.model.timing.sectionStart},
                   {"rtl_switch_cycles", switchCycles(r.rtl)},
                   {"rtl_reload_writes", r.rtl.reloadWrites},
                   {"rtl_reload_exposed_cycles", r.rtl.cfgWaitCycles}};
  writeFile(p, j.dump(2) + "\n");
}

}  // namespace stepgen
