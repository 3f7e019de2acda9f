#pragma once
// The run description (run.json) and the run result (result JSON) exchanged between
// `stepgen verify` and the Verilator harness (sim/harness/harness_main.cpp). Both sides use
// these types, so every key is spelled once, here (docs/hardware.md section 6).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/dram.hpp"

namespace stepgen {

/// One fp32 row-major region of the DRAM image bound to a .npy file.
struct RunRegion {
  std::string name;
  std::filesystem::path npy;  ///< relative to the folder of run.json unless absolute
  uint64_t base = 0;          ///< bytes
  uint64_t rows = 0, cols = 0;
};

/// The configuration writes that bring section `section` of a program into its context
/// while the fabric runs (docs/hardware.md section 5; made by foldSections).
struct SectionReload {
  int section = 0;
  /// The host may write once section `after` (= section - contexts) has finished: the
  /// fabric shows dbg_section > after, or dbg_section == after with dbg_cfg_wait.
  int after = 0;
  std::vector<std::pair<uint32_t, uint32_t>> writes;  ///< (word address, word), SECTIONS_LOADED last
};

/// What the harness runs. Keys in run.json: bitstream, n_ag, pieces_per_beat, link_bits,
/// addr_bits, dram {channels, latency, ii, startup}, dram_bytes, inputs, outputs, ports,
/// n_mu, max_cycles, watchdog_cycles, trace, result, decisions, reloads [{section, after, writes:
/// [[address, word], ...]}].
struct RunDesc {
  std::filesystem::path bitstream;  ///< .bin of little-endian 32-bit configuration words
  int nAg = 0;                      ///< address generators = width of dram_req_valid
  int pieces = 0;                   ///< 64-byte pieces per DRAM request (per beat)
  int linkBits = 0;                 ///< must equal 512 * pieces
  int addrBits = 0;                 ///< bits of one piece address, 1..64
  DramTiming timing;                ///< cycles
  uint64_t dramBytes = 0;           ///< size of the DRAM image, bytes
  std::vector<RunRegion> inputs, outputs;
  std::vector<std::string> ports;   ///< unit input port names; index = bit of dbg_port_*
  unsigned nMu = 0;                 ///< memory units = 32-bit fields of dbg_mu_held
  uint64_t maxCycles = 1000000000ull;  ///< status "timeout" after this many cycles
  uint64_t watchdog = 20000;        ///< idle cycles before status "deadlock"
  std::filesystem::path trace;      ///< FST file ("" = none; needs a --trace build)
  std::filesystem::path result = "result.json";
  /// Decision log of the compute units' merges (sim/harness/decision_log.hpp; "" = none).
  std::filesystem::path decisions;
  std::vector<SectionReload> reloads;  ///< in section order
};

/// The reloads as JSON text (the `reloads` value of run.json; `compile` writes it as
/// reloads.json for a user's host). Deterministic.
std::string reloadsJsonText(const std::vector<SectionReload>& reloads);

/// Reads run.json; relative paths are resolved against its folder. Throws
/// std::runtime_error naming the file and the missing or bad key.
RunDesc readRunDesc(const std::filesystem::path& file);
/// Writes run.json (paths as stored). Throws std::runtime_error if it cannot be written.
void writeRunDesc(const std::filesystem::path& file, const RunDesc& d);

/// A stuck input port at the end of a run that did not finish.
struct StuckPort {
  unsigned index = 0;  ///< bit of dbg_port_*
  std::string port;    ///< its name from RunDesc::ports
  bool valid = false;  ///< the FIFO holds a beat nobody takes
  bool full = false;   ///< the FIFO is full
};

/// When one section (context) of a run happened, in cycles from `start` (dbg_section).
struct SectionTime {
  uint64_t start = 0;      ///< first cycle the fabric's section barrier showed this section
  uint64_t firstBeat = 0;  ///< first cycle a beat entered a unit input FIFO (0 = none)
  uint64_t lastBeat = 0;   ///< last such cycle
};

/// What the harness measured. Keys: status, cycles, done_cycle, last_write_done, sim_cycles,
/// config_words, offchip_read_bytes, offchip_write_bytes, outstanding_reads, mu_peak_words,
/// sections [{start, first_beat, last_beat}], cfg_wait_cycles, reload_writes, stuck, stuck_detail, wall_seconds,
/// cycles_per_second, message.
struct RunResult {
  std::string status;                 ///< ok | deadlock | timeout | error (the driver adds crashed)
  uint64_t cycles = 0;                ///< max(done cycle, last write completion)
  std::optional<uint64_t> doneCycle;  ///< set when ok
  uint64_t lastWriteDone = 0, simCycles = 0, configWords = 0;
  uint64_t readBytes = 0, writeBytes = 0, outstandingReads = 0;
  uint64_t muPeakWords = 0;           ///< most words all memory units held in one cycle
  uint64_t muPeakBytes() const { return 4 * muPeakWords; }
  std::vector<SectionTime> sections;  ///< one per section the run reached
  uint64_t cfgWaitCycles = 0;         ///< cycles a finished section waited for the next one's reload (exposed)
  uint64_t reloadWrites = 0;          ///< configuration words written while running (one per cycle)
  uint64_t configCycles = 0;          ///< cycles from reset release to the start pulse (writing the bitstream)
  std::vector<StuckPort> stuck;
  double wallSeconds = 0, cyclesPerSecond = 0;
  std::string message;
};

/// Writes the result JSON. Throws std::runtime_error if it cannot be written.
void writeRunResult(const std::filesystem::path& file, const RunResult& r);
/// Reads a result JSON. Throws std::runtime_error if missing or malformed.
RunResult readRunResult(const std::filesystem::path& file);
/// The result JSON as text (what writeRunResult writes), for embedding in another document.
std::string runResultText(const RunResult& r);
/// Parses runResultText's output; `what` names the source in the std::runtime_error thrown
/// for malformed text.
RunResult parseRunResult(const std::string& text, const std::string& what);

}  // namespace stepgen
