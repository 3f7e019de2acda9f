// What both Verilator harnesses (flat ports: harness_main.cpp, AXI: axi_main.cpp) do alike:
// read the bitstream, move tensors between .npy files and the DRAM image, check port widths.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/dram.hpp"
#include "common/npy.hpp"
#include "common/run_desc.hpp"
#include "harness/decision_log.hpp"
#include "harness/vport.hpp"

namespace stepgen::harness {

namespace fs = std::filesystem;

/// The bitstream file as 32-bit little-endian words. Throws std::runtime_error if it cannot be
/// read, is not a whole number of words or holds more than 2^24 words.
inline std::vector<uint32_t> readBitstream(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw std::runtime_error("bitstream '" + p.string() + "': cannot open");
    std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (b.size() % 4) throw std::runtime_error("bitstream '" + p.string() + "': size " + std::to_string(b.size()) +
                                               " is not a multiple of 4 bytes");
    std::vector<uint32_t> w(b.size() / 4);
    for (size_t i = 0; i < w.size(); ++i) {
        const auto* u = reinterpret_cast<const unsigned char*>(b.data() + 4 * i);
        w[i] = uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
    }
    if (w.size() > (1u << 24))
        throw std::runtime_error("bitstream '" + p.string() + "': more than 2^24 words");
    return w;
}

/// Copies input region `g` (an .npy file of rows x cols fp32) into the DRAM image at its base.
/// Throws std::runtime_error for a shape mismatch or a region outside the image.
inline void loadInput(const RunRegion& g, DramModel& dram) {
    NpyArray a = readNpy(g.npy.string());
    const uint64_t n = a.data.size();
    if ((g.rows || g.cols) && g.rows * g.cols != n)
        throw std::runtime_error("input '" + g.name + "' (" + g.npy.string() + "): run description says " +
                                 std::to_string(g.rows) + "x" + std::to_string(g.cols) + " but the file holds " +
                                 std::to_string(n) + " values");
    if (a.shape.size() == 2 && g.rows && (a.shape[0] != g.rows || a.shape[1] != g.cols))
        throw std::runtime_error("input '" + g.name + "' (" + g.npy.string() + "): shape " +
                                 std::to_string(a.shape[0]) + "x" + std::to_string(a.shape[1]) + " != " +
                                 std::to_string(g.rows) + "x" + std::to_string(g.cols));
    if (g.base > dram.size() || dram.size() - g.base < n * 4)
        throw std::runtime_error("input '" + g.name + "' does not fit the DRAM image (base " +
                                 std::to_string(g.base) + ", " + std::to_string(n * 4) + " bytes, image " +
                                 std::to_string(dram.size()) + " bytes)");
    if (n) std::memcpy(dram.mem() + g.base, a.data.data(), n * 4);
}

/// Writes output region `g` from the DRAM image to its .npy file (rows x cols fp32).
/// Throws std::runtime_error for a region outside the image.
inline void writeOutput(const RunRegion& g, const DramModel& dram) {
    const uint64_t n = g.rows * g.cols;
    if (g.base > dram.size() || dram.size() - g.base < n * 4)
        throw std::runtime_error("output '" + g.name + "' does not fit the DRAM image");
    std::vector<float> v(n);
    if (n) std::memcpy(v.data(), dram.mem() + g.base, n * 4);
    if (g.npy.has_parent_path()) fs::create_directories(g.npy.parent_path());
    writeNpy(g.npy.string(), {static_cast<size_t>(g.rows), static_cast<size_t>(g.cols)}, v.data());
}

/// Throws std::runtime_error if the compiled fabric's port `name` is not `width` bits wide.
template <class T>
void checkPort(const char* name, const T& port, uint64_t width) {
    if (!vport::typeMatchesWidth(port, static_cast<unsigned>(width)))
        throw std::runtime_error(std::string("port ") + name + " of the compiled fabric (" +
                                 std::to_string(vport::capacityBits(port)) +
                                 "-bit Verilator type) does not match the run description (" +
                                 std::to_string(width) + " bits): check n_ag, pieces_per_beat, link_bits, "
                                 "addr_bits and ports");
}

/// Exit codes of a run (harnessMain adds 1 for a bad command line and 2 for an error).
enum ExitCode { kOk = 0, kDeadlock = 3, kTimeout = 4 };

/// What both harnesses watch on the fabric's debug outputs every cycle (docs/hardware.md
/// section 6): the most words the memory units held at once, the cycles a finished section
/// waited for its reload, and per section its first cycle and first and last beat.
struct FabricWatch {
    uint64_t muPeak = 0, cfgWaitCycles = 0;
    std::vector<SectionTime> sections;

    /// Samples cycle `c` (from the start pulse) of the evaluated fabric `t` with `nMu` memory
    /// units; returns whether a beat entered any unit port (dbg_port_fire). Sets the decision
    /// log's cycle and section for the rising edge that follows.
    template <class Top>
    bool sample(const Top& t, unsigned nMu, uint64_t c) {
        uint64_t held = 0;
        for (unsigned m = 0; m < nMu; ++m) held += vport::getBits(t.dbg_mu_held, m * 32, 32);
        muPeak = std::max(muPeak, held);
        cfgWaitCycles += t.dbg_cfg_wait ? 1 : 0;
        const size_t sec = static_cast<size_t>(t.dbg_section);
        decisionLog().cycle = c;  // the merge decisions of this cycle's rising edge
        decisionLog().section = static_cast<unsigned>(sec);
        if (sec >= sections.size()) sections.resize(sec + 1, SectionTime{c, 0, 0});
        const bool fire = vport::anySet(t.dbg_port_fire);
        if (fire) {
            SectionTime& st = sections[sec];
            if (!st.firstBeat) st.firstBeat = c;
            st.lastBeat = c;
        }
        return fire;
    }
};

/// The reload words of a run in order (docs/hardware.md section 5): section k may be written
/// once the fabric shows section k - contexts finished, that is dbg_section past it, or at it
/// with dbg_cfg_wait. The harness takes next() while writing() and calls update() every cycle.
class ReloadCursor {
public:
    explicit ReloadCursor(const std::vector<SectionReload>& r) : r_(r) {}
    /// Starts the next reload when the fabric in section `section` allows it.
    void update(size_t section, bool cfgWait) {
        if (writing_ || reload_ >= r_.size()) return;
        const size_t after = static_cast<size_t>(r_[reload_].after);
        writing_ = section > after || (section == after && cfgWait);
    }
    bool writing() const { return writing_; }
    /// The next (word address, word) to write; call only while writing().
    std::pair<uint32_t, uint32_t> next() {
        const auto w = r_[reload_].writes[word_];
        ++written_;
        if (++word_ == r_[reload_].writes.size()) writing_ = false, word_ = 0, ++reload_;
        return w;
    }
    /// Words handed out so far.
    uint64_t written() const { return written_; }

private:
    const std::vector<SectionReload>& r_;
    size_t reload_ = 0, word_ = 0;
    bool writing_ = false;
    uint64_t written_ = 0;
};

/// The unit input ports whose FIFO holds a beat or is full, named from the run description
/// (the stuck ones when a run stopped making progress).
template <class Top>
std::vector<StuckPort> stuckPorts(const Top& t, const RunDesc& rd, unsigned nport) {
    std::vector<StuckPort> v;
    for (unsigned i = 0; i < nport; ++i) {
        const bool valid = vport::getBit(t.dbg_port_valid, i), full = vport::getBit(t.dbg_port_full, i);
        if (valid || full) v.push_back({i, i < rd.ports.size() ? rd.ports[i] : "port" + std::to_string(i), valid, full});
    }
    return v;
}

/// The counters both harnesses report after a run: DRAM traffic and write completion from
/// `dram` (a DramModel or an AxiMem), what `watch` saw, the reload words written, the simulated
/// cycles `simCycles` and their wall time `wall` (seconds).
template <class Dram>
void fillCounters(RunResult& res, const Dram& dram, const FabricWatch& watch, const ReloadCursor& reloads,
                  uint64_t simCycles, double wall) {
    res.lastWriteDone = dram.lastWriteDone();
    res.simCycles = simCycles;
    res.readBytes = dram.readBytes();
    res.writeBytes = dram.writeBytes();
    res.outstandingReads = dram.outstandingReads();
    res.muPeakWords = watch.muPeak;
    res.sections = watch.sections;
    res.cfgWaitCycles = watch.cfgWaitCycles;
    res.reloadWrites = reloads.written();
    res.wallSeconds = wall;
    res.cyclesPerSecond = wall > 0 ? double(simCycles) / wall : 0.0;
}

/// A run that did not finish: sets res.message for status "deadlock" (no progress for
/// rd.watchdog cycles, stopped at `cycle`) or "timeout", prints it and the stuck ports on
/// stderr, and returns the exit code.
inline int reportUnfinished(RunResult& res, const std::string& status, const RunDesc& rd, uint64_t cycle) {
    res.message = status == "deadlock" ? "deadlock: no progress for " + std::to_string(rd.watchdog) +
                                             " cycles, stopped at cycle " + std::to_string(cycle)
                                       : "timeout: max_cycles " + std::to_string(rd.maxCycles) + " reached";
    std::fprintf(stderr, "%s\n", res.message.c_str());
    for (const StuckPort& d : res.stuck)
        std::fprintf(stderr, "  stuck port %u %s:%s%s\n", d.index, d.port.c_str(), d.valid ? " non-empty" : "",
                     d.full ? " full" : "");
    return status == "deadlock" ? kDeadlock : kTimeout;
}

/// main() of a harness: `<binary> <run.json> [+verilator+args]`. Reads the run description,
/// calls run(rd, ctx, res) (which returns the exit code: 0 ok, 3 deadlock, 4 timeout) and
/// writes the result JSON; any exception becomes status "error" and exit code 2; a bad
/// command line exits 1.
template <class Run>
int harnessMain(int argc, char** argv, Run run) {
    if (argc < 2 || argv[1][0] == '+' || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
        std::fprintf(stderr, "usage: %s <run.json> [+verilator+args]\n", argv[0]);
        return 1;
    }
    const auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    RunDesc rd;
    RunResult res;
    try {
        rd = readRunDesc(argv[1]);
        decisionLog().open(rd.decisions);
        const int rc = run(rd, ctx.get(), res);
        decisionLog().close();
        writeRunResult(rd.result, res);
        return rc;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        if (!rd.result.empty()) {
            try {
                RunResult err;
                err.status = "error";
                err.message = e.what();
                writeRunResult(rd.result, err);
            } catch (const std::exception&) {
            }
        }
        return 2;
    }
}

}  // namespace stepgen::harness
