// Unit tests for the Verilator port accessors (sim/harness/vport.hpp). Built as its own
// executable (tests/rtl_harness.cmake) because it needs the Verilator headers.
#include <catch2/catch.hpp>

#include "harness/vport.hpp"

#include <initializer_list>
#include <utility>
#include <vector>

using namespace stepgen::vport;

namespace {
/// typeMatchesWidth(port, width) == matches for every {width, matches} row.
template <class T>
void checkWidths(const T& port, std::initializer_list<std::pair<unsigned, bool>> rows) {
    for (const auto& [width, matches] : rows) {
        INFO("width " << width);
        CHECK(typeMatchesWidth(port, width) == matches);
    }
}
}  // namespace

TEST_CASE("vport: type matches width like Verilator", "[vport]") {
    CData c = 0;
    SData s = 0;
    IData i = 0;
    QData q = 0;
    VlWide<3> w3{};
    VlWide<32> w32{};
    checkWidths(c, {{1, true}, {8, true}, {9, false}});
    checkWidths(s, {{9, true}});
    checkWidths(i, {{24, true}, {16, false}});
    checkWidths(q, {{64, true}, {65, false}});
    checkWidths(w3, {{65, true}, {96, true}, {97, false}});
    checkWidths(w32, {{1024, true}});
    CHECK(capacityBits(w32) == 1024);
}

TEST_CASE("vport: bit fields across word boundaries", "[vport]") {
    VlWide<4> w{};  // 128 bits
    setBits(w, 20, 40, 0xAB'CDEF'1234ull);  // spans words 0, 1
    CHECK(getBits(w, 20, 40) == 0xAB'CDEF'1234ull);
    CHECK(w.m_storage[0] == 0x23400000u);  // the value's low 12 bits (0x234) at bits [31:20]
    CHECK(w.m_storage[1] == 0xABCDEF1u);    // its upper 28 bits at bits [59:32]
    setBits(w, 60, 64, 0xFEDC'BA98'7654'3210ull);  // spans words 1, 2, 3
    CHECK(getBits(w, 60, 64) == 0xFEDC'BA98'7654'3210ull);
    CHECK(getBits(w, 20, 40) == 0xAB'CDEF'1234ull);  // untouched
    setBit(w, 127, true);
    CHECK(getBit(w, 127));
    CHECK(w.m_storage[3] >> 31 == 1u);
    CHECK_THROWS_AS(getBits(w, 100, 29), std::out_of_range);
    CHECK_THROWS_AS(setBit(w, 128, true), std::out_of_range);

    QData q = 0;
    setBits(q, 24, 40, 0xFF'0000'0001ull);
    CHECK(q == 0xFF00'0000'0100'0000ull);
    CHECK(getBits(q, 24, 40) == 0xFF'0000'0001ull);
    CHECK(getBits(q, 0, 64) == q);
    CData c = 0;
    setBit(c, 1, true);
    CHECK(c == 2);
    CHECK(getBit(c, 1));
    CHECK_FALSE(getBit(c, 0));
    CHECK_THROWS_AS(setBit(c, 8, true), std::out_of_range);
}

TEST_CASE("vport: byte copies and anySet", "[vport]") {
    VlWide<32> w{};  // 1024 bits = two 512-bit beats
    CHECK_FALSE(anySet(w));
    std::vector<uint8_t> src(64), dst(64);
    for (int k = 0; k < 64; ++k) src[k] = static_cast<uint8_t>(k + 1);
    writeBytes(w, 512, 64, src.data());  // beat 1
    CHECK(anySet(w));
    CHECK(w.m_storage[16] == 0x04030201u);  // byte 0 -> bits [519:512]
    CHECK(getBits(w, 512, 8) == 1);
    readBytes(w, 512, 64, dst.data());
    CHECK(dst == src);
    CHECK(getBits(w, 0, 64) == 0);  // beat 0 untouched
    CHECK_THROWS_AS(readBytes(w, 516, 4, dst.data()), std::invalid_argument);
    CHECK_THROWS_AS(writeBytes(w, 1024 - 32, 8, src.data()), std::out_of_range);

    IData i = 0;
    writeBytes(i, 8, 2, src.data());
    CHECK(i == 0x020100u);
    CHECK(anySet(i));
}
