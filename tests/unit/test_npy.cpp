// Unit tests for the .npy v1.0 float32 reader/writer (sim/common/npy.hpp).
#include <catch2/catch.hpp>

#include "common/npy.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

using stepgen::NpyArray;
using stepgen::npyHeader;
using stepgen::readNpy;
using stepgen::writeNpy;

namespace {
std::string tmpPath(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() / "stepgen_test_npy";
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}
void writeRaw(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
std::string readRaw(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
// Checks that `fn` throws std::runtime_error whose message contains every given fragment.
template <class F>
void requireError(F fn, const std::string& a, const std::string& b) {
    try {
        fn();
        FAIL("no exception");
    } catch (const std::runtime_error& e) {
        const std::string m = e.what();
        INFO(m);
        CHECK(m.find(a) != std::string::npos);
        CHECK(m.find(b) != std::string::npos);
    }
}
}  // namespace

TEST_CASE("npy: header of a 2x3 float32 array is byte-exact", "[npy]") {
    // Format spec v1.0: "\x93NUMPY", 0x01 0x00, uint16 LE header length, then the dict
    // literal padded with spaces and ended by '\n' so that the total is a multiple of 64.
    // The dict "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" is 59 chars;
    // 10 + 59 + 1 = 70 -> pad to 128: 58 spaces, header length 128 - 10 = 118 = 0x76.
    std::string expect("\x93NUMPY\x01\x00\x76\x00", 10);
    expect += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    expect += std::string(58, ' ');
    expect += "\n";
    REQUIRE(expect.size() == 128);
    CHECK(npyHeader({2, 3}) == expect);

    const float v[6] = {0.f, 1.f, -2.5f, 3.25f, 1e-3f, -0.f};
    const std::string p = tmpPath("h23.npy");
    writeNpy(p, {2, 3}, v);
    const std::string raw = readRaw(p);
    REQUIRE(raw.size() == 128 + 24);
    CHECK(raw.substr(0, 128) == expect);
    CHECK(std::memcmp(raw.data() + 128, v, 24) == 0);  // little-endian host
}

TEST_CASE("npy: 1-D header", "[npy]") {
    const std::string h = npyHeader({5});
    CHECK(h.size() % 64 == 0);
    CHECK(h.find("'shape': (5,), }") != std::string::npos);
    CHECK(h.back() == '\n');
}

TEST_CASE("npy: round trip 2-D and 1-D", "[npy]") {
    NpyArray a;
    a.shape = {16, 64};
    for (size_t i = 0; i < 16 * 64; ++i) a.data.push_back(static_cast<float>(i) * 0.5f - 100.f);
    const std::string p = tmpPath("rt2.npy");
    writeNpy(p, a);
    NpyArray b = readNpy(p);
    CHECK(b.shape == a.shape);
    CHECK(b.rows() == 16);
    CHECK(b.cols() == 64);
    CHECK(b.data == a.data);

    NpyArray c;
    c.shape = {7};
    c.data = {1, 2, 3, 4, 5, 6, 7};
    writeNpy(tmpPath("rt1.npy"), c);
    NpyArray d = readNpy(tmpPath("rt1.npy"));
    CHECK(d.shape == c.shape);
    CHECK(d.rows() == 1);
    CHECK(d.cols() == 7);
    CHECK(d.data == c.data);

    NpyArray e;  // empty array
    e.shape = {0, 3};
    writeNpy(tmpPath("rt0.npy"), e);
    CHECK(readNpy(tmpPath("rt0.npy")).data.empty());
}

TEST_CASE("npy: reads a hand-written file with other key order and spacing", "[npy]") {
    std::string dict = "{'shape':(1,2),'fortran_order':False,'descr':'<f4'}\n";
    std::string f("\x93NUMPY\x01\x00", 8);
    f.push_back(static_cast<char>(dict.size()));
    f.push_back('\0');
    f += dict;
    const float v[2] = {1.5f, -7.f};
    f.append(reinterpret_cast<const char*>(v), 8);
    writeRaw(tmpPath("odd.npy"), f);
    NpyArray a = readNpy(tmpPath("odd.npy"));
    CHECK(a.shape == std::vector<size_t>{1, 2});
    CHECK(a.data == std::vector<float>{1.5f, -7.f});
}

TEST_CASE("npy: errors name the file and the problem", "[npy]") {
    const std::string missing = tmpPath("does_not_exist.npy");
    std::remove(missing.c_str());
    requireError([&] { readNpy(missing); }, "does_not_exist.npy", "cannot open");

    const auto mk = [](const std::string& dictBody) {
        std::string dict = dictBody;
        while ((10 + dict.size() + 1) % 64) dict.push_back(' ');
        dict.push_back('\n');
        std::string f("\x93NUMPY\x01\x00", 8);
        f.push_back(static_cast<char>(dict.size()));
        f.push_back('\0');
        return f + dict;
    };
    // {file, its bytes, what the error says}
    const struct {
        const char* file;
        std::string bytes;
        const char* error;
    } bad[] = {
        {"f8.npy", mk("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }") + std::string(8, '\0'),
         "wrong dtype '<f8'"},
        {"bigendian.npy", mk("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") + std::string(4, '\0'),
         "wrong dtype"},
        {"fortran.npy", mk("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }") + std::string(16, '\0'),
         "fortran_order"},
        {"trunc.npy", mk("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }") + std::string(15, '\0'),
         "truncated data"},
        {"trunchdr.npy", mk("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }").substr(0, 40),
         "truncated header"},
        {"rank3.npy", mk("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1), }") + std::string(4, '\0'),
         "rank 3"},
        {"badmagic.npy", "PK\x03\x04 this is a zip file, not an npy", "bad magic"},
    };
    for (const auto& b : bad) {
        INFO(b.file);
        const std::string path = tmpPath(b.file);
        writeRaw(path, b.bytes);
        requireError([&] { readNpy(path); }, b.file, b.error);
    }

    requireError([&] { writeNpy("/nonexistent_dir_xyz/out.npy", {1}, nullptr); }, "out.npy", "cannot open");
    CHECK_THROWS_AS(npyHeader({1, 2, 3}), std::invalid_argument);
}
