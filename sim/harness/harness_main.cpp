// Verilator testbench main for a generated stepgen fabric (top module `sg_top`, verilated
// with `--prefix Vfabric`). Built by flows/verilator_build.sh; see docs/hardware.md section 6.
//
// Usage:  Vfabric <run.json> [+verilator+plusargs...]
//
// run.json (what to run) and the result JSON (what was measured) are the types RunDesc and
// RunResult of common/run_desc.hpp, shared with `stepgen verify`.
//
// Flow: rst_n low for 4 cycles; one cfg write per cycle for every word of the bitstream
// (cfg_addr = word index); inputs copied into the DRAM image; then cycle 0 is the cycle in
// which `start` is high. Every cycle c: with clk low the harness drives start and, for each
// AG whose oldest read is deliverable at c (DramModel::responseReady), dram_resp_valid and
// dram_resp_data; evaluates; reads dram_req_* (dram_req_ready is always 1) and hands every
// valid request to DramModel::request(ag, ..., c) in AG order; if `done` is high the run
// ends with done_cycle = c; otherwise it raises clk (the edge: requests and responses of
// cycle c are transferred, responses are popped). cycles = max(done_cycle, last write
// completion).
//
// Watchdog: a cycle is idle when no dbg_port_fire bit is set, no AG requests, no response is
// delivered and no read is outstanding in the DRAM model. After `watchdog_cycles` idle
// cycles in a row the run stops with status "deadlock"; stuck ports are those whose
// dbg_port_valid or dbg_port_full bit is set.
//
// Outputs are written for every status but "error". Exit codes: 0 ok, 1 usage, 2 error,
// 3 deadlock, 4 timeout.
#include "Vfabric.h"

#include <verilated.h>
#ifdef STEPGEN_TRACE
#include <verilated_fst_c.h>
#endif

#include "common/dram.hpp"
#include "common/npy.hpp"
#include "common/run_desc.hpp"
#include "harness/harness_io.hpp"
#include "harness/vport.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace stepgen;
using namespace stepgen::harness;

namespace {


/// Runs the whole flow; fills `res` and returns the exit code. Throws on errors.
int run(const RunDesc& rd, VerilatedContext* ctx, RunResult& res) {
    const unsigned NAG = static_cast<unsigned>(rd.nAg), P = static_cast<unsigned>(rd.pieces);
    const unsigned LB = static_cast<unsigned>(rd.linkBits), AB = static_cast<unsigned>(rd.addrBits);
    const size_t beatBytes = P * kDramPieceBytes;

    const std::vector<uint32_t> words = readBitstream(rd.bitstream);
    DramModel dram(rd.timing, rd.dramBytes, rd.nAg);
    for (const RunRegion& g : rd.inputs) loadInput(g, dram);

#ifdef STEPGEN_TRACE
    if (!rd.trace.empty()) ctx->traceEverOn(true);
#else
    if (!rd.trace.empty())
        throw std::runtime_error("trace requested (" + rd.trace.string() +
                                 ") but this binary was built without --trace");
#endif
    auto top = std::make_unique<Vfabric>(ctx, "TOP");
#ifdef STEPGEN_TRACE
    std::unique_ptr<VerilatedFstC> tfp;
    if (!rd.trace.empty()) {
        tfp = std::make_unique<VerilatedFstC>();
        top->trace(tfp.get(), 99);
        if (rd.trace.has_parent_path()) fs::create_directories(rd.trace.parent_path());
        tfp->open(rd.trace.string().c_str());
    }
    const auto dump = [&] {
        if (tfp) tfp->dump(ctx->time());
        ctx->timeInc(1);
    };
#else
    const auto dump = [&] { ctx->timeInc(1); };
#endif

    checkPort("dram_req_valid", top->dram_req_valid, NAG);
    checkPort("dram_req_ready", top->dram_req_ready, NAG);
    checkPort("dram_req_write", top->dram_req_write, NAG);
    checkPort("dram_resp_valid", top->dram_resp_valid, NAG);
    checkPort("dram_req_addr", top->dram_req_addr, uint64_t(NAG) * P * AB);
    checkPort("dram_req_wdata", top->dram_req_wdata, uint64_t(NAG) * LB);
    checkPort("dram_resp_data", top->dram_resp_data, uint64_t(NAG) * LB);
    checkPort("cfg_addr", top->cfg_addr, 24);
    checkPort("cfg_wdata", top->cfg_wdata, 32);
    unsigned nport = vport::capacityBits(top->dbg_port_valid);
    if (!rd.ports.empty()) {
        nport = static_cast<unsigned>(rd.ports.size());
        checkPort("dbg_port_valid", top->dbg_port_valid, nport);
        checkPort("dbg_port_full", top->dbg_port_full, nport);
        checkPort("dbg_port_fire", top->dbg_port_fire, nport);
    }

    const auto tick = [&] {  // one full cycle with the current inputs
        top->clk = 0;
        top->eval();
        dump();
        top->clk = 1;
        top->eval();
        dump();
    };

    // Reset and configuration.
    top->clk = 0;
    top->rst_n = 0;
    top->start = 0;
    top->cfg_we = 0;
    top->cfg_addr = 0;
    top->cfg_wdata = 0;
    for (unsigned a = 0; a < NAG; ++a) {
        vport::setBit(top->dram_req_ready, a, true);
        vport::setBit(top->dram_resp_valid, a, false);
    }
    for (int i = 0; i < 4; ++i) tick();
    top->rst_n = 1;
    for (size_t i = 0; i < words.size(); ++i) {
        top->cfg_we = 1;
        top->cfg_addr = static_cast<uint32_t>(i);
        top->cfg_wdata = words[i];
        tick();
    }
    top->cfg_we = 0;
    top->cfg_addr = 0;
    top->cfg_wdata = 0;

    // Run.
    std::vector<uint64_t> addrs(P);
    std::vector<uint8_t> wbuf(beatBytes);
    std::vector<char> driven(NAG, 0);
    std::string status;
    std::optional<uint64_t> doneCycle;
    uint64_t idle = 0, c = 0;
    if (rd.nMu) checkPort("dbg_mu_held", top->dbg_mu_held, uint64_t(rd.nMu) * 32);
    FabricWatch watch;
    // Reloads: one word per cycle while the fabric keeps running.
    ReloadCursor reloads(rd.reloads);
    std::FILE* portLog = std::getenv("STEPGEN_PORT_LOG") ? std::fopen(std::getenv("STEPGEN_PORT_LOG"), "w") : nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    for (;; ++c) {
        if (c >= rd.maxCycles) {
            status = "timeout";
            break;
        }
        if (ctx->gotFinish()) throw std::runtime_error("the design called $finish at cycle " + std::to_string(c));
        bool active = false;
        top->clk = 0;
        top->start = (c == 0);
        const bool wrIdle = dram.lastWriteDone() <= c;
        top->dram_wr_idle = wrIdle;
        const bool writing = reloads.writing();
        top->cfg_we = writing;
        if (writing) {
            const auto [addr, word] = reloads.next();
            top->cfg_addr = addr;
            top->cfg_wdata = word;
        }
        const bool anyOutstanding = dram.outstandingReads() > 0;
        for (unsigned a = 0; a < NAG; ++a) {
            const bool r = anyOutstanding && dram.responseReady(static_cast<int>(a), c);
            driven[a] = r;
            vport::setBit(top->dram_resp_valid, a, r);
            if (r) vport::writeBytes(top->dram_resp_data, a * LB, beatBytes, dram.responseData(static_cast<int>(a)).data());
        }
        top->eval();
        dump();
        const bool fire = watch.sample(*top, rd.nMu, c);
        reloads.update(static_cast<size_t>(top->dbg_section), top->dbg_cfg_wait);  // from the next cycle on
        if (portLog && fire)  // calibration aid: one line per beat
            for (unsigned p = 0; p < nport; ++p)
                if (vport::getBit(top->dbg_port_fire, p)) std::fprintf(portLog, "%llu %u\n", (unsigned long long)c, p);
        if (vport::anySet(top->dram_req_valid)) {
            active = true;
            for (unsigned a = 0; a < NAG; ++a) {
                if (!vport::getBit(top->dram_req_valid, a)) continue;
                const bool w = vport::getBit(top->dram_req_write, a);
                for (unsigned k = 0; k < P; ++k) addrs[k] = vport::getBits(top->dram_req_addr, (a * P + k) * AB, AB);
                if (w) vport::readBytes(top->dram_req_wdata, a * LB, beatBytes, wbuf.data());
                try {
                    dram.request(static_cast<int>(a), w, addrs, w ? wbuf.data() : nullptr, c);
                } catch (const std::exception& e) {
                    throw std::runtime_error(std::string(w ? "write" : "read") + " request of AG " +
                                             std::to_string(a) + " at cycle " + std::to_string(c) + ": " + e.what());
                }
            }
        }
        if (top->done) {
            doneCycle = c;
            status = "ok";
            break;
        }
        active = active || anyOutstanding || fire || !wrIdle || reloads.writing() || top->cfg_we;
        idle = active ? 0 : idle + 1;
        if (idle >= rd.watchdog) {
            status = "deadlock";
            break;
        }

        top->clk = 1;
        top->eval();
        dump();
        for (unsigned a = 0; a < NAG; ++a)
            if (driven[a]) dram.popResponse(static_cast<int>(a), c);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (portLog) std::fclose(portLog);
    const uint64_t simCycles = c + (status == "timeout" ? 0 : 1);

    if (status != "ok") res.stuck = stuckPorts(*top, rd, nport);
    top->final();
#ifdef STEPGEN_TRACE
    if (tfp) tfp->close();
#endif

    for (const RunRegion& g : rd.outputs) writeOutput(g, dram);

    const uint64_t cycles = doneCycle ? std::max(*doneCycle, dram.lastWriteDone()) : c;
    res.status = status;
    res.cycles = cycles;
    res.doneCycle = doneCycle;
    fillCounters(res, dram, watch, reloads, simCycles, wall);
    res.configWords = words.size();
    res.configCycles = words.size();

    if (status == "ok") {
        std::printf("ok: %llu cycles (done at %llu, last write %llu), %.3g cycles/s\n",
                    (unsigned long long)cycles, (unsigned long long)*doneCycle,
                    (unsigned long long)dram.lastWriteDone(), wall > 0 ? double(simCycles) / wall : 0.0);
        return kOk;
    }
    return reportUnfinished(res, status, rd, c);
}

}  // namespace

int main(int argc, char** argv) { return harness::harnessMain(argc, argv, run); }
