// Generic bit/byte accessors for Verilator top-level ports of any width.
//
// Verilator represents a port of w bits as CData (w <= 8), SData (<= 16), IData (<= 32),
// QData (<= 64) or VlWide<ceil(w/32)> (an array of 32-bit words, word 0 = bits [31:0]).
// The functions below take any of these by reference, so harness code is written once for
// every fabric size (NAG*LB can be thousands of bits). Bit positions are counted from the
// port's LSB. Byte-wise copies assume a little-endian host (x86/ARM), where the in-memory
// bytes of both integer ports and VlWide word arrays are the port bits in LSB-first order.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vport.hpp assumes a little-endian host"
#endif

namespace stepgen::vport {

/// Number of bits the Verilator type of `s` can hold (8/16/32/64 or 32*N for VlWide<N>).
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
constexpr unsigned capacityBits(const T&) { return sizeof(T) * 8; }
template <std::size_t N>
constexpr unsigned capacityBits(const VlWide<N>&) { return static_cast<unsigned>(N * 32); }

/// True if Verilator would represent a `width`-bit port with the type of `s` (used to check
/// the run description against the compiled fabric).
template <class T>
bool typeMatchesWidth(const T& s, unsigned width) {
    const unsigned cap = capacityBits(s);
    if (width == 0) return false;
    if (cap <= 64) {
        const unsigned want = width <= 8 ? 8 : width <= 16 ? 16 : width <= 32 ? 32 : width <= 64 ? 64 : 0;
        return want == cap;
    }
    return width > 64 && (width + 31) / 32 == cap / 32;
}

namespace detail {
[[noreturn]] __attribute__((noinline, cold)) inline void rangeError(unsigned cap, unsigned lsb, unsigned width) {
    throw std::out_of_range("vport: bits [" + std::to_string(lsb) + " +: " + std::to_string(width) +
                            "] outside a " + std::to_string(cap) + "-bit port");
}
inline void checkRange(unsigned cap, unsigned lsb, unsigned width) {
    if (static_cast<uint64_t>(lsb) + width > cap) rangeError(cap, lsb, width);
}
inline uint64_t mask(unsigned width) { return width >= 64 ? ~uint64_t(0) : ((uint64_t(1) << width) - 1); }
template <class T>
unsigned char* bytes(T& s) {
    if constexpr (std::is_integral_v<T>) return reinterpret_cast<unsigned char*>(&s);
    else return reinterpret_cast<unsigned char*>(s.data());
}
template <class T>
const unsigned char* bytes(const T& s) {
    if constexpr (std::is_integral_v<T>) return reinterpret_cast<const unsigned char*>(&s);
    else return reinterpret_cast<const unsigned char*>(s.data());
}
}  // namespace detail

/// Reads `width` (1..64) bits starting at bit `lsb`. Throws std::out_of_range if the
/// field does not fit the port's type.
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline uint64_t getBits(const T& s, unsigned lsb, unsigned width) {
    detail::checkRange(capacityBits(s), lsb, width);
    return (static_cast<uint64_t>(s) >> lsb) & detail::mask(width);
}
template <std::size_t N>
inline uint64_t getBits(const VlWide<N>& s, unsigned lsb, unsigned width) {
    detail::checkRange(capacityBits(s), lsb, width);
    uint64_t r = 0;
    for (unsigned i = 0; i < width;) {
        const unsigned b = lsb + i, w = b / 32, off = b % 32;
        const unsigned take = std::min(32 - off, width - i);
        r |= ((static_cast<uint64_t>(s.m_storage[w]) >> off) & detail::mask(take)) << i;
        i += take;
    }
    return r;
}

/// Writes the low `width` (1..64) bits of `v` at bit `lsb`, leaving the other bits alone.
/// Throws std::out_of_range if the field does not fit the port's type.
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline void setBits(T& s, unsigned lsb, unsigned width, uint64_t v) {
    detail::checkRange(capacityBits(s), lsb, width);
    const uint64_t m = detail::mask(width) << lsb;
    s = static_cast<T>((static_cast<uint64_t>(s) & ~m) | ((v << lsb) & m));
}
template <std::size_t N>
inline void setBits(VlWide<N>& s, unsigned lsb, unsigned width, uint64_t v) {
    detail::checkRange(capacityBits(s), lsb, width);
    for (unsigned i = 0; i < width;) {
        const unsigned b = lsb + i, w = b / 32, off = b % 32;
        const unsigned take = std::min(32 - off, width - i);
        const uint32_t m = static_cast<uint32_t>(detail::mask(take) << off);
        const uint32_t bits = static_cast<uint32_t>(((v >> i) & detail::mask(take)) << off);
        s.m_storage[w] = (s.m_storage[w] & ~m) | bits;
        i += take;
    }
}

/// Reads bit `bit`. Throws std::out_of_range outside the port's type.
template <class T>
inline bool getBit(const T& s, unsigned bit) { return getBits(s, bit, 1) != 0; }
/// Sets bit `bit` to `v`. Throws std::out_of_range outside the port's type.
template <class T>
inline void setBit(T& s, unsigned bit, bool v) { setBits(s, bit, 1, v ? 1 : 0); }

/// True if any bit of the port is set (bits above the port's width are always 0 in
/// Verilator outputs).
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline bool anySet(const T& s) { return s != 0; }
template <std::size_t N>
inline bool anySet(const VlWide<N>& s) {
    for (std::size_t i = 0; i < N; ++i)
        if (s.m_storage[i]) return true;
    return false;
}

/// Copies `nbytes` bytes of the port starting at bit `lsb` (a multiple of 8) to `dst`,
/// byte 0 = bits [lsb+7:lsb]. Throws std::invalid_argument for an unaligned lsb,
/// std::out_of_range if the field does not fit.
template <class T>
inline void readBytes(const T& s, unsigned lsb, std::size_t nbytes, uint8_t* dst) {
    if (lsb % 8) throw std::invalid_argument("vport::readBytes: lsb not a multiple of 8");
    detail::checkRange(capacityBits(s), lsb, static_cast<unsigned>(nbytes * 8));
    std::memcpy(dst, detail::bytes(s) + lsb / 8, nbytes);
}

/// Copies `nbytes` bytes from `src` into the port starting at bit `lsb` (a multiple of 8).
/// Throws std::invalid_argument for an unaligned lsb, std::out_of_range if it does not fit.
template <class T>
inline void writeBytes(T& s, unsigned lsb, std::size_t nbytes, const uint8_t* src) {
    if (lsb % 8) throw std::invalid_argument("vport::writeBytes: lsb not a multiple of 8");
    detail::checkRange(capacityBits(s), lsb, static_cast<unsigned>(nbytes * 8));
    std::memcpy(detail::bytes(s) + lsb / 8, src, nbytes);
}

}  // namespace stepgen::vport
