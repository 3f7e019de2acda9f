#include "driver/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "support/files.hpp"

namespace fs = std::filesystem;

namespace stepgen {

bool bytesEqual(const VerifyReport& r) {
  return r.rtlReadBytes == r.model.timing.offchipReadBytes && r.rtlWriteBytes == r.model.timing.offchipWriteBytes;
}

bool cyclesWithin(const VerifyReport& r) {
  return r.maxCycleErrorPercent <= 0 || std::fabs(r.cycleErrorPercent) <= r.maxCycleErrorPercent;
}

bool passed(const VerifyReport& r) {
  if (r.model.timing.deadlock) return false;
  if (!r.rtlRan && r.rtlStatus.empty()) return true;  // model only
  return r.rtlStatus == "ok" && r.outputsEqual && bytesEqual(r) && cyclesWithin(r);
}

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
  if (!r.rtlRan && r.rtlStatus.empty()) return s + "rtl   : not run\n";
  if (r.rtlStatus != "ok") {
    s += fmt::format("rtl   : {}\n", r.rtlStatus);
    for (const auto& x : r.rtlStuck) s += "  stuck: " + x + "\n";
    if (!r.firstMismatch.empty()) s += r.firstMismatch + "\n";
    return s + "verdict: FAIL\n";
  }
  s += fmt::format("rtl   : {} cycles, off-chip {} B read + {} B written, memory units held at most {} B, {:.0f} cycles/s, "
                   "build {:.1f} s\n",
                   r.rtlCycles, r.rtlReadBytes, r.rtlWriteBytes, r.rtlPeakMuBytes, r.rtlCyclesPerSecond, r.buildSeconds);
  s += fmt::format("cycles: rtl {} vs model {}: {:+.2f} %{}\n", r.rtlCycles, m.timing.cycles, r.cycleErrorPercent,
                   cyclesWithin(r) ? "" : fmt::format(", above the tolerance of {} %", r.maxCycleErrorPercent));
  s += r.outputsEqual ? "outputs: bit-exact\n" : fmt::format("outputs: MISMATCH, first at {}\n", r.firstMismatch);
  s += fmt::format("off-chip bytes: rtl {} model {}: {}\n", r.rtlReadBytes + r.rtlWriteBytes,
                   m.timing.offchipReadBytes + m.timing.offchipWriteBytes, bytesEqual(r) ? "equal" : "DIFFER");
  s += fmt::format("verdict: {}\n", passed(r) ? "PASS" : "FAIL");
  return s;
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
  j["rtl"] = {{"ran", r.rtlRan},         {"status", r.rtlStatus},        {"cycles", r.rtlCycles},
              {"offchip_read_bytes", r.rtlReadBytes}, {"offchip_write_bytes", r.rtlWriteBytes},
              {"wall_seconds", r.rtlWallSeconds}, {"cycles_per_second", r.rtlCyclesPerSecond},
              {"build_seconds", r.buildSeconds}, {"stuck", r.rtlStuck}, {"mu_peak_bytes", r.rtlPeakMuBytes}};
  j["outputs_equal"] = r.outputsEqual;
  j["first_mismatch"] = r.firstMismatch;
  j["cycle_error_percent"] = r.cycleErrorPercent;
  writeFile(p, j.dump(2) + "\n");
}

}  // namespace stepgen
