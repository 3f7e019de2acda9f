// The JSON form of a study point: VerifyOptions in, VerifyReport out.
#include "jobs/verify_json.hpp"

#include <stdexcept>

#include "common/run_desc.hpp"

namespace stepgen {

using json = nlohmann::json;

json verifyOptionsJson(const VerifyOptions& o) {
  json j;
  j["arch"] = o.archPath, j["graph"] = o.graphPath, j["out"] = o.outDir, j["inputs"] = o.inputsDir;
  j["seed"] = o.seed, j["min_sections"] = o.minSections, j["on_chip_carry"] = o.onChipCarry;
  j["trace"] = o.trace, j["skip_rtl"] = o.skipRtl, j["axi"] = o.axi;
  j["hierarchical"] = o.hierarchical ? json(*o.hierarchical) : json(nullptr);
  j["watchdog_cycles"] = o.watchdogCycles, j["build_cache"] = o.buildCache;
  j["max_cycle_error_percent"] = o.maxCycleErrorPercent;
  return j;
}

VerifyOptions verifyOptionsFromJson(const json& j, const std::string& what) {
  VerifyOptions o;
  try {
    o.archPath = j.at("arch").get<std::string>(), o.graphPath = j.at("graph").get<std::string>();
    o.outDir = j.at("out").get<std::string>(), o.inputsDir = j.at("inputs").get<std::string>();
    o.seed = j.at("seed").get<uint32_t>(), o.minSections = j.at("min_sections").get<int>();
    o.onChipCarry = j.at("on_chip_carry").get<bool>(), o.trace = j.at("trace").get<bool>();
    o.skipRtl = j.at("skip_rtl").get<bool>(), o.axi = j.at("axi").get<bool>();
    if (!j.at("hierarchical").is_null()) o.hierarchical = j.at("hierarchical").get<bool>();
    o.watchdogCycles = j.at("watchdog_cycles").get<int64_t>(), o.buildCache = j.at("build_cache").get<std::string>();
    o.maxCycleErrorPercent = j.at("max_cycle_error_percent").get<double>();
  } catch (const json::exception& e) {
    throw std::runtime_error(what + ": verify options: " + e.what());
  }
  return o;
}

json modelResultJson(const ModelResult& m) {
  const TimingResult& t = m.timing;
  json orders = json::object();
  for (const auto& [op, order] : t.mergeOrders) orders[std::to_string(op)] = order;
  return {{"cycles", t.cycles},
          {"offchip_read_bytes", t.offchipReadBytes},
          {"offchip_write_bytes", t.offchipWriteBytes},
          {"deadlock", t.deadlock},
          {"stuck", t.stuck},
          {"section_start", t.sectionStart},
          {"reload_words", t.reloadWords},
          {"reload_exposed_cycles", t.reloadExposedCycles},
          {"dram_late", t.dramLate},
          {"merge_orders", orders},
          {"merge_order_revised", t.mergeOrderRevised},
          {"onchip_bytes", m.onchipBytes},
          {"flops", m.flops},
          {"offchip_bytes", m.offchipBytes},
          {"roofline_cycles", m.rooflineCycles},
          {"wall_seconds", m.wallSeconds}};
}

ModelResult modelResultFromJson(const json& j) {
  ModelResult m;
  TimingResult& t = m.timing;
  t.cycles = j.at("cycles").get<int64_t>();
  t.offchipReadBytes = j.at("offchip_read_bytes").get<int64_t>();
  t.offchipWriteBytes = j.at("offchip_write_bytes").get<int64_t>();
  t.deadlock = j.at("deadlock").get<bool>();
  t.stuck = j.at("stuck").get<std::vector<std::string>>();
  t.sectionStart = j.at("section_start").get<std::vector<int64_t>>();
  t.reloadWords = j.at("reload_words").get<int64_t>();
  t.reloadExposedCycles = j.at("reload_exposed_cycles").get<int64_t>();
  t.dramLate = j.at("dram_late").get<int64_t>();
  for (const auto& [op, order] : j.at("merge_orders").items()) t.mergeOrders[std::stoi(op)] = order.get<std::vector<int>>();
  t.mergeOrderRevised = j.at("merge_order_revised").get<bool>();
  m.onchipBytes = j.at("onchip_bytes").get<int64_t>();
  m.flops = j.at("flops").get<int64_t>();
  m.offchipBytes = j.at("offchip_bytes").get<int64_t>();
  m.rooflineCycles = j.at("roofline_cycles").get<double>();
  m.wallSeconds = j.at("wall_seconds").get<double>();
  return m;
}

json verifyReportJson(const VerifyReport& r) {
  json j;
  j["model"] = modelResultJson(r.model);
  j["rtl"] = json::parse(runResultText(r.rtl));
  j["build_seconds"] = r.buildSeconds, j["hierarchical"] = r.hierarchical;
  j["outputs_equal"] = r.outputsEqual, j["first_mismatch"] = r.firstMismatch;
  j["cycle_error_percent"] = r.cycleErrorPercent, j["max_cycle_error_percent"] = r.maxCycleErrorPercent;
  j["compile_seconds"] = r.compileSeconds, j["sections"] = r.sections, j["reloaded_sections"] = r.reloadedSections;
  j["carried_dram_bytes"] = r.carriedDramBytes, j["carried_onchip_bytes"] = r.carriedOnchipBytes;
  j["axi_ran"] = r.axiRan, j["axi"] = json::parse(runResultText(r.axi)), j["axi_mismatch"] = r.axiMismatch;
  j["axi_build_seconds"] = r.axiBuildSeconds;
  j["rtl_decisions"] = r.rtlDecisions, j["differing_decisions"] = r.differingDecisions;
  j["replay"] = r.replay ? modelResultJson(*r.replay) : json(nullptr);
  j["replay_cycle_error_percent"] = r.replayCycleErrorPercent, j["replay_error"] = r.replayError;
  return j;
}

VerifyReport verifyReportFromJson(const json& j, const std::string& what) {
  VerifyReport r;
  try {
    r.model = modelResultFromJson(j.at("model"));
    r.rtl = parseRunResult(j.at("rtl").dump(), what + ": rtl");
    r.buildSeconds = j.at("build_seconds").get<double>(), r.hierarchical = j.at("hierarchical").get<bool>();
    r.outputsEqual = j.at("outputs_equal").get<bool>(), r.firstMismatch = j.at("first_mismatch").get<std::string>();
    r.cycleErrorPercent = j.at("cycle_error_percent").get<double>();
    r.maxCycleErrorPercent = j.at("max_cycle_error_percent").get<double>();
    r.compileSeconds = j.at("compile_seconds").get<double>(), r.sections = j.at("sections").get<int>();
    r.reloadedSections = j.at("reloaded_sections").get<int>();
    r.carriedDramBytes = j.at("carried_dram_bytes").get<int64_t>();
    r.carriedOnchipBytes = j.at("carried_onchip_bytes").get<int64_t>();
    r.axiRan = j.at("axi_ran").get<bool>(), r.axi = parseRunResult(j.at("axi").dump(), what + ": axi");
    r.axiMismatch = j.at("axi_mismatch").get<std::string>(), r.axiBuildSeconds = j.at("axi_build_seconds").get<double>();
    r.rtlDecisions = j.at("rtl_decisions").get<int64_t>(), r.differingDecisions = j.at("differing_decisions").get<int64_t>();
    if (!j.at("replay").is_null()) r.replay = modelResultFromJson(j.at("replay"));
    r.replayCycleErrorPercent = j.at("replay_cycle_error_percent").get<double>();
    r.replayError = j.at("replay_error").get<std::string>();
  } catch (const json::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  return r;
}

json diagErrorJson(const DiagError& e) {
  json a = json::array();
  for (const Diagnostic& d : e.diags)
    a.push_back({{"id", d.id}, {"file", d.loc.file}, {"line", d.loc.line}, {"col", d.loc.col}, {"message", d.message}});
  return a;
}

DiagError diagErrorFromJson(const json& a) {
  std::vector<Diagnostic> ds;
  for (const json& d : a)
    ds.push_back({d.at("id").get<std::string>(),
                  {d.at("file").get<std::string>(), d.at("line").get<int>(), d.at("col").get<int>()},
                  d.at("message").get<std::string>(),
                  {}});
  return DiagError(ds);
}

}  // namespace stepgen
