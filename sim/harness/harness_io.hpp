// What both Verilator harnesses (flat ports: harness_main.cpp, AXI: axi_main.cpp) do alike:
// read the bitstream, move tensors between .npy files and the DRAM image, check port widths.
#pragma once

#include <verilated.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dram.hpp"
#include "common/npy.hpp"
#include "common/run_desc.hpp"
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
        const int rc = run(rd, ctx.get(), res);
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
