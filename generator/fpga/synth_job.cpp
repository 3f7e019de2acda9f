// One job of `stepgen synth`: Yosys (or nextpnr) on one module, and the synthesis cache.
#include "fpga/synth_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <sys/wait.h>

#include "support/files.hpp"

namespace fs = std::filesystem;

namespace stepgen {

namespace {

// Adds the cells of one Yosys `stat -json` cell-type table to `c`.
void classify(const nlohmann::json& byType, SynthCounts& c) {
  for (const auto& item : byType.items()) {
    const std::string type = item.key();
    const int64_t k = item.value().get<int64_t>();
    auto starts = [&](const char* p) { return type.rfind(p, 0) == 0; };
    if (starts("LUT") || type == "SB_LUT4") c.luts += k;
    else if (starts("FD") || starts("SB_DFF")) c.ffs += k;
    else if (starts("CARRY") || type == "SB_CARRY") c.carries += k;
    else if (starts("DSP48") || type == "SB_MAC16") c.dsps += k;
    else if (starts("RAMB18")) c.brams += 0.5 * double(k);
    else if (starts("RAMB36") || type == "SB_RAM40_4K" || type == "SB_SPRAM256KA") c.brams += double(k);
    else if (starts("RAM") || starts("SRL")) c.lutrams += k;
  }
}

// The longest path ltp printed: "Longest topological path in <module> (length=N):".
int64_t pathLength(const std::string& ltp) {
  std::smatch m;
  static const std::regex re(R"(\(length=(\d+)\))");
  return std::regex_search(ltp, m, re) ? std::stoll(m[1]) : 0;
}

// Yosys's resource sharing (`share`) as run for a row: "off" for a compute unit (or part) with the
// attention datapath (ATTN = 1), whose rowsum tree and elementwise unit hold many exclusive
// fp32 adders: the pass's SAT problems (218,000 variables) ran out of 20 GiB there, with
// and without -fast.
std::string shareMode(const SynthRow& row) { return cuParamIs(row, "ATTN", "1") ? "off" : "full"; }

// Fills the row's counts from a finished job's <prefix>.stat.json and .ltp.txt; false when
// the statistics are missing or not Yosys's.
bool readJob(const std::string& prefix, SynthRow& row) {
  const nlohmann::json stat = nlohmann::json::parse(readText(prefix + ".stat.json"), nullptr, false);
  if (stat.is_discarded() || !stat.contains("design")) return false;
  row.c = SynthCounts();
  classify(stat["design"].value("num_cells_by_type", nlohmann::json::object()), row.c);
  const std::string ltp = readText(prefix + ".ltp.txt");
  row.c.logicLevels = pathLength(ltp);
  row.c.lutLevels = pathLutLevels(ltp);
  return true;
}

// The job's key in the synthesis cache (flows/fpga_synth_key.sh); "" when it cannot be made.
std::string jobKey(const std::string& env, const fs::path& rtl, const std::string& blackboxes, const SynthOptions& o,
                   const SynthRow& row, const std::string& prefix) {
  const std::string cmd = fmt::format("{} bash '{}/flows/fpga_synth_key.sh' '{}' {} {} '{}' '{}' > '{}.key'", env,
                                      stepgenRoot(), rtl.string(), row.module, o.target, row.params, blackboxes, prefix);
  if (std::system(cmd.c_str()) != 0) return "";
  std::string key = readText(prefix + ".key");
  key = key.substr(0, key.find('\n'));
  return key.size() == 64 ? key : "";
}

// Fills `row` from cache entry `entry` (copying its files to `prefix`.*); false when there
// is no entry or it cannot be read (the job then runs and addCached replaces it).
bool takeCached(const fs::path& entry, const std::string& prefix, SynthRow& row) {
  const double seconds = std::strtod(readText(entry / "seconds").c_str(), nullptr);
  if (seconds <= 0) return false;
  std::error_code ec1, ec2;
  fs::copy_file(entry / "stat.json", prefix + ".stat.json", fs::copy_options::overwrite_existing, ec1);
  fs::copy_file(entry / "ltp.txt", prefix + ".ltp.txt", fs::copy_options::overwrite_existing, ec2);
  if (ec1 || ec2 || !readJob(prefix, row)) return false;
  writeFile(prefix + ".log", fmt::format("stepgen synth: the result of an identical job, cache entry {}\n", entry.string()));
  row.seconds = seconds, row.status = "ok", row.cached = true;
  return true;
}

// Adds the finished job at `prefix` to the cache as `entry`, replacing an entry that could
// not be read; published by one rename (publishFolder), so another process sharing the
// cache sees a whole entry or none.
void addCached(const fs::path& entry, const std::string& prefix, const SynthRow& row) {
  const fs::path work = privateFolderFor(entry);
  fs::copy_file(prefix + ".stat.json", work / "stat.json");
  fs::copy_file(prefix + ".ltp.txt", work / "ltp.txt");
  writeFile(work / "seconds", fmt::format("{}\n", row.seconds));  // exact: a run from the cache sums the same
  std::error_code ec;
  if (fs::exists(entry)) fs::remove_all(entry, ec);  // (only an unreadable entry gets here)
  publishFolder(work, entry);  // false: another process published it first
}

}  // namespace

bool cuParamIs(const SynthRow& row, const std::string& name, const std::string& value) {
  return (row.unit == "cu" || row.unit.rfind("cu.", 0) == 0) && (" " + row.params + " ").find(" " + name + "=" + value + " ") != std::string::npos;
}

int64_t pathLutLevels(const std::string& ltpText) {
  static const std::regex re(R"(\(via ltp_lut(ram)?_\d+\))");
  return std::distance(std::sregex_iterator(ltpText.begin(), ltpText.end(), re), std::sregex_iterator());
}

void runSynthJob(const fs::path& rtl, const std::string& blackboxes, const SynthOptions& o, SynthRow& row) {
  const std::string prefix = (fs::path(o.outDir) / row.unit).string();
  const std::string env = "SG_SHARE=" + shareMode(row);
  const std::string key = o.cacheDir.empty() ? "" : jobKey(env, rtl, blackboxes, o, row, prefix);
  const fs::path entry = key.empty() ? fs::path() : fs::path(o.cacheDir) / key;
  if (!key.empty() && takeCached(entry, prefix, row)) return;
  const std::string cmd = fmt::format("{} bash '{}/flows/fpga_synth_one.sh' '{}' {} {} '{}' '{}' '{}' {} {}", env,
                                      stepgenRoot(), rtl.string(), row.module, o.target, row.params, blackboxes, prefix,
                                      o.timeoutSeconds, o.memLimitKb);
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  row.status = status == 0 && readJob(prefix, row) ? "ok" : status == 124 ? "timeout" : "failed";
  // Only a finished job is kept: a timeout depends on the limits, not the design.
  if (!key.empty() && row.status == "ok") addCached(entry, prefix, row);
}

void runPnrJob(const fs::path& rtl, const SynthOptions& o, const Part& part, SynthRow& row) {
  // The HX8K has no DSP blocks; the place-and-route flow then builds multipliers from LUTs.
  if (row.c.luts > part.luts || row.c.brams > part.brams || (part.dsps > 0 && row.c.dsps > part.dsps)) {
    row.pnrStatus = "too-big";
    return;
  }
  const fs::path prefix = fs::path(o.outDir) / row.unit;
  const std::string cmd = fmt::format("bash '{}/flows/ice40_pnr_one.sh' '{}' {} '{}' {} '{}' {} {}", stepgenRoot(),
                                      rtl.string(), row.module, row.params, part.name, prefix.string(), o.timeoutSeconds,
                                      o.memLimitKb);
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  row.pnrSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  const nlohmann::json rep = status == 0 ? nlohmann::json::parse(readText(prefix.string() + ".pnr.json"), nullptr, false)
                                         : nlohmann::json();
  if (status != 0 || rep.is_discarded() || !rep.contains("fmax")) {
    // nextpnr says "no BELs remaining" when the wrapped unit needs more cells than the part
    // has; its utilisation lines before that say how many ("ICESTORM_LC: 10338/ 7680").
    const std::string log = fs::exists(prefix.string() + ".pnr.log") ? readText(prefix.string() + ".pnr.log") : "";
    const bool full = log.find("no BELs remaining") != std::string::npos;
    row.pnrStatus = status == 124 ? "timeout" : full ? "does-not-fit" : "failed";
    std::smatch m;
    if (full && std::regex_search(log, m, std::regex(R"(ICESTORM_LC:\s*(\d+)\s*/)"))) row.pnrLcs = std::stoll(m[1]);
    return;
  }
  row.fmaxMhz = 0;
  for (const auto& [clock, f] : rep["fmax"].items()) {
    const double mhz = f.value("achieved", 0.0);
    row.fmaxMhz = row.fmaxMhz == 0 ? mhz : std::min(row.fmaxMhz, mhz);
  }
  const nlohmann::json& u = rep["utilization"];
  row.pnrLcs = u.contains("ICESTORM_LC") ? u["ICESTORM_LC"].value("used", int64_t(0)) : 0;
  row.pnrRams = u.contains("ICESTORM_RAM") ? u["ICESTORM_RAM"].value("used", int64_t(0)) : 0;
  row.pnrStatus = "placed";
}

}  // namespace stepgen
