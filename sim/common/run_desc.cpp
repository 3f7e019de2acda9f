#include "common/run_desc.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace stepgen {

namespace {

fs::path resolve(const fs::path& dir, const std::string& p) {
  fs::path q(p);
  return q.is_absolute() ? q : dir / q;
}

json reloadsJson(const std::vector<SectionReload>& reloads) {
  json a = json::array();
  for (const SectionReload& s : reloads) {
    json w = json::array();
    for (const auto& [addr, word] : s.writes) w.push_back({addr, word});
    a.push_back({{"section", s.section}, {"after", s.after}, {"writes", w}});
  }
  return a;
}

json readJson(const fs::path& file, const char* what) {
  std::ifstream f(file);
  if (!f) throw std::runtime_error(std::string(what) + " '" + file.string() + "': cannot open");
  try {
    json j;
    f >> j;
    return j;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string(what) + " '" + file.string() + "': invalid JSON: " + e.what());
  }
}

void writeJson(const fs::path& p, const json& j, const char* what) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream f(p);
  f << j.dump(2) << "\n";
  if (!f) throw std::runtime_error(std::string(what) + " '" + p.string() + "': cannot write");
}

json regionsJson(const std::vector<RunRegion>& rs) {
  json a = json::array();
  for (const RunRegion& g : rs)
    a.push_back({{"name", g.name}, {"npy", g.npy.string()}, {"base", g.base}, {"rows", g.rows}, {"cols", g.cols}});
  return a;
}

}  // namespace

RunDesc readRunDesc(const fs::path& file) {
  const json j = readJson(file, "run description");
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const auto fail = [&](const std::string& what) {
    return std::runtime_error("run description '" + file.string() + "': " + what);
  };
  const auto need = [&](const json& o, const char* key) -> const json& {
    if (!o.is_object() || !o.contains(key)) throw fail(std::string("missing key '") + key + "'");
    return o.at(key);
  };
  RunDesc r;
  try {
    r.bitstream = resolve(dir, need(j, "bitstream").get<std::string>());
    r.nAg = need(j, "n_ag").get<int>();
    r.pieces = need(j, "pieces_per_beat").get<int>();
    r.linkBits = need(j, "link_bits").get<int>();
    r.addrBits = need(j, "addr_bits").get<int>();
    const json& d = need(j, "dram");
    r.timing.channels = need(d, "channels").get<int>();
    r.timing.latency = need(d, "latency").get<uint64_t>();
    r.timing.ii = need(d, "ii").get<uint64_t>();
    r.timing.startup = need(d, "startup").get<uint64_t>();
    r.dramBytes = need(j, "dram_bytes").get<uint64_t>();
    for (const char* key : {"inputs", "outputs"}) {
      if (!j.contains(key)) continue;
      for (const json& e : j.at(key)) {
        RunRegion g;
        g.name = e.value("name", std::string());
        g.npy = resolve(dir, need(e, "npy").get<std::string>());
        g.base = need(e, "base").get<uint64_t>();
        g.rows = e.value("rows", uint64_t(0));
        g.cols = e.value("cols", uint64_t(0));
        (std::string(key) == "inputs" ? r.inputs : r.outputs).push_back(g);
      }
    }
    if (j.contains("ports"))
      for (const json& p : j.at("ports")) r.ports.push_back(p.get<std::string>());
    r.maxCycles = j.value("max_cycles", r.maxCycles);
    r.watchdog = j.value("watchdog_cycles", r.watchdog);
    r.nMu = j.value("n_mu", 0u);
    const std::string tr = j.value("trace", std::string());
    if (!tr.empty()) r.trace = resolve(dir, tr);
    r.result = resolve(dir, j.value("result", std::string("result.json")));
    const std::string dl = j.value("decisions", std::string());
    if (!dl.empty()) r.decisions = resolve(dir, dl);
    if (j.contains("reloads"))
      for (const json& x : j.at("reloads")) {
        SectionReload s{x.at("section").get<int>(), x.at("after").get<int>(), {}};
        for (const json& w : x.at("writes")) s.writes.push_back({w.at(0).get<uint32_t>(), w.at(1).get<uint32_t>()});
        r.reloads.push_back(std::move(s));
      }
  } catch (const json::exception& e) {
    throw fail(std::string("bad value: ") + e.what());
  }
  if (r.nAg < 1) throw fail("n_ag must be >= 1");
  if (r.pieces < 1) throw fail("pieces_per_beat must be >= 1");
  if (r.linkBits != 512 * r.pieces)
    throw fail("link_bits (" + std::to_string(r.linkBits) + ") must equal 512 * pieces_per_beat");
  if (r.addrBits < 1 || r.addrBits > 64) throw fail("addr_bits must be in 1..64");
  if (r.timing.channels < 1 || r.timing.ii < 1) throw fail("dram.channels and dram.ii must be >= 1");
  for (const RunRegion& g : r.outputs)
    if (g.rows == 0 || g.cols == 0) throw fail("output '" + g.name + "' needs rows and cols");
  return r;
}

std::string reloadsJsonText(const std::vector<SectionReload>& reloads) {
  std::string s = "[\n";  // one reload per line: a host reads it, a person skims it
  for (size_t i = 0; i < reloads.size(); ++i)
    s += " " + reloadsJson({reloads[i]})[0].dump() + (i + 1 < reloads.size() ? ",\n" : "\n");
  return s + "]\n";
}

void writeRunDesc(const fs::path& file, const RunDesc& d) {
  json j;
  j["bitstream"] = d.bitstream.string();
  j["n_ag"] = d.nAg;
  j["n_mu"] = d.nMu;
  j["pieces_per_beat"] = d.pieces;
  j["link_bits"] = d.linkBits;
  j["addr_bits"] = d.addrBits;
  j["dram"] = {{"channels", d.timing.channels}, {"latency", d.timing.latency}, {"ii", d.timing.ii},
               {"startup", d.timing.startup}};
  j["dram_bytes"] = d.dramBytes;
  j["inputs"] = regionsJson(d.inputs);
  j["outputs"] = regionsJson(d.outputs);
  j["ports"] = d.ports;
  j["max_cycles"] = d.maxCycles;
  j["watchdog_cycles"] = d.watchdog;
  j["trace"] = d.trace.string();
  j["result"] = d.result.string();
  j["decisions"] = d.decisions.string();
  j["reloads"] = reloadsJson(d.reloads);
  writeJson(file, j, "run description");
}

namespace {

json resultJson(const RunResult& r) {
  json j;
  j["status"] = r.status;
  if (!r.message.empty()) j["message"] = r.message;
  // Every field, also for status "error", so that a result read back equals the one written.
  json stuck = json::array(), detail = json::array();
  for (const StuckPort& s : r.stuck) {
    stuck.push_back(s.port);
    detail.push_back({{"index", s.index}, {"port", s.port}, {"valid", s.valid}, {"full", s.full}});
  }
  j["cycles"] = r.cycles;
  j["done_cycle"] = r.doneCycle ? json(*r.doneCycle) : json(nullptr);
  j["last_write_done"] = r.lastWriteDone;
  j["sim_cycles"] = r.simCycles;
  j["config_words"] = r.configWords;
  j["offchip_read_bytes"] = r.readBytes;
  j["offchip_write_bytes"] = r.writeBytes;
  j["outstanding_reads"] = r.outstandingReads;
  j["mu_peak_words"] = r.muPeakWords;
  json secs = json::array();
  for (const SectionTime& t : r.sections)
    secs.push_back({{"start", t.start}, {"first_beat", t.firstBeat}, {"last_beat", t.lastBeat}});
  j["sections"] = secs;
  j["cfg_wait_cycles"] = r.cfgWaitCycles;
  j["reload_writes"] = r.reloadWrites;
  j["config_cycles"] = r.configCycles;
  j["stuck"] = stuck;
  j["stuck_detail"] = detail;
  j["wall_seconds"] = r.wallSeconds;
  j["cycles_per_second"] = r.cyclesPerSecond;
  return j;
}

RunResult resultFromJson(const json& j, const std::string& what) {
  RunResult r;
  try {
    r.status = j.value("status", std::string("unknown"));
    r.message = j.value("message", std::string());
    r.cycles = j.value("cycles", uint64_t(0));
    if (j.contains("done_cycle") && !j["done_cycle"].is_null()) r.doneCycle = j["done_cycle"].get<uint64_t>();
    r.lastWriteDone = j.value("last_write_done", uint64_t(0));
    r.simCycles = j.value("sim_cycles", uint64_t(0));
    r.configWords = j.value("config_words", uint64_t(0));
    r.readBytes = j.value("offchip_read_bytes", uint64_t(0));
    r.writeBytes = j.value("offchip_write_bytes", uint64_t(0));
    r.outstandingReads = j.value("outstanding_reads", uint64_t(0));
    r.muPeakWords = j.value("mu_peak_words", uint64_t(0));
    r.wallSeconds = j.value("wall_seconds", 0.0);
    r.cyclesPerSecond = j.value("cycles_per_second", 0.0);
    r.cfgWaitCycles = j.value("cfg_wait_cycles", uint64_t(0));
    r.reloadWrites = j.value("reload_writes", uint64_t(0));
    r.configCycles = j.value("config_cycles", uint64_t(0));
    if (j.contains("sections"))
      for (const json& t : j["sections"])
        r.sections.push_back({t.value("start", uint64_t(0)), t.value("first_beat", uint64_t(0)), t.value("last_beat", uint64_t(0))});
    if (j.contains("stuck_detail"))
      for (const json& d : j["stuck_detail"])
        r.stuck.push_back({d.value("index", 0u), d.value("port", std::string()), d.value("valid", false), d.value("full", false)});
  } catch (const json::exception& e) {
    throw std::runtime_error(what + ": bad value: " + e.what());
  }
  return r;
}

}  // namespace

std::string runResultText(const RunResult& r) { return resultJson(r).dump(2); }

void writeRunResult(const fs::path& file, const RunResult& r) { writeJson(file, resultJson(r), "run result"); }

RunResult readRunResult(const fs::path& file) {
  return resultFromJson(readJson(file, "run result"), "run result '" + file.string() + "'");
}

RunResult parseRunResult(const std::string& text, const std::string& what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error(what + ": invalid JSON: " + e.what());
  }
  return resultFromJson(j, what);
}

}  // namespace stepgen
