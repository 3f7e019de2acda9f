#include "common/npy.hpp"

#include <cctype>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace stepgen {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.cpp assumes a little-endian host"
#endif

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error("npy file '" + path + "': " + what);
}

// Tiny cursor over the header dict literal.
struct HeaderParser {
    const std::string& s;
    const std::string& path;
    size_t i = 0;

    void ws() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    }
    bool peek(char c) {
        ws();
        return i < s.size() && s[i] == c;
    }
    void expect(char c) {
        ws();
        if (i >= s.size() || s[i] != c)
            fail(path, std::string("malformed header (expected '") + c + "' at offset " +
                           std::to_string(i) + "): " + s);
        ++i;
    }
    std::string str() {
        ws();
        if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail(path, "malformed header (expected string): " + s);
        const char q = s[i++];
        const size_t j = s.find(q, i);
        if (j == std::string::npos) fail(path, "malformed header (unterminated string): " + s);
        std::string r = s.substr(i, j - i);
        i = j + 1;
        return r;
    }
    std::string word() {
        ws();
        const size_t b = i;
        while (i < s.size() && std::isalnum(static_cast<unsigned char>(s[i]))) ++i;
        if (b == i) fail(path, "malformed header (expected a value): " + s);
        return s.substr(b, i - b);
    }
    std::vector<size_t> tuple() {
        expect('(');
        std::vector<size_t> r;
        while (!peek(')')) {
            const std::string w = word();
            size_t v = 0;
            for (char c : w) {
                if (!std::isdigit(static_cast<unsigned char>(c))) fail(path, "malformed shape: " + s);
                v = v * 10 + static_cast<size_t>(c - '0');
            }
            r.push_back(v);
            if (peek(',')) ++i; else break;
        }
        expect(')');
        return r;
    }
};

}  // namespace

NpyArray readNpy(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail(path, "cannot open (missing or unreadable)");
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (all.size() < kMagicLen + 4 || std::memcmp(all.data(), kMagic, kMagicLen) != 0)
        fail(path, "not a .npy file (bad magic)");
    const auto u8 = [&](size_t k) { return static_cast<size_t>(static_cast<unsigned char>(all[k])); };
    const int major = static_cast<int>(u8(6)), minor = static_cast<int>(u8(7));
    size_t hlen = 0, hstart = 0;
    if (major == 1 && minor == 0) {
        hlen = u8(8) | (u8(9) << 8);
        hstart = 10;
    } else if (major == 2 && minor == 0) {
        if (all.size() < 12) fail(path, "truncated header");
        hlen = u8(8) | (u8(9) << 8) | (u8(10) << 16) | (u8(11) << 24);
        hstart = 12;
    } else {
        fail(path, "unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
    }
    if (all.size() < hstart + hlen) fail(path, "truncated header");
    const std::string header = all.substr(hstart, hlen);

    HeaderParser p{header, path};
    std::string descr;
    bool haveDescr = false, haveOrder = false, haveShape = false, fortran = false;
    std::vector<size_t> shape;
    p.expect('{');
    while (!p.peek('}')) {
        const std::string key = p.str();
        p.expect(':');
        if (key == "descr") {
            descr = p.str();
            haveDescr = true;
        } else if (key == "fortran_order") {
            const std::string w = p.word();
            if (w != "True" && w != "False") fail(path, "malformed fortran_order: " + w);
            fortran = (w == "True");
            haveOrder = true;
        } else if (key == "shape") {
            shape = p.tuple();
            haveShape = true;
        } else {
            fail(path, "unexpected header key '" + key + "'");
        }
        if (p.peek(',')) ++p.i; else break;
    }
    p.expect('}');
    if (!haveDescr || !haveOrder || !haveShape) fail(path, "header lacks descr, fortran_order or shape: " + header);
    if (descr != "<f4") fail(path, "wrong dtype '" + descr + "' (expected '<f4', little-endian float32)");
    if (fortran) fail(path, "fortran_order is True (only C order is supported)");
    if (shape.size() != 1 && shape.size() != 2)
        fail(path, "unsupported rank " + std::to_string(shape.size()) + " (expected 1-D or 2-D)");

    size_t count = 1;
    for (size_t d : shape) count *= d;
    const size_t dataStart = hstart + hlen;
    const size_t have = all.size() - dataStart;
    if (have < count * 4)
        fail(path, "truncated data: expected " + std::to_string(count * 4) + " bytes, found " + std::to_string(have));
    NpyArray a;
    a.shape = shape;
    a.data.resize(count);
    if (count) std::memcpy(a.data.data(), all.data() + dataStart, count * 4);
    return a;
}

std::string npyHeader(const std::vector<size_t>& shape) {
    std::string sh;
    if (shape.size() == 1) sh = "(" + std::to_string(shape[0]) + ",)";
    else if (shape.size() == 2) sh = "(" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ")";
    else throw std::invalid_argument("npyHeader: rank must be 1 or 2, got " + std::to_string(shape.size()));
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + sh + ", }";
    // Pad with spaces so that magic(6)+version(2)+len(2)+dict+'\n' is a multiple of 64.
    size_t total = 10 + dict.size() + 1;
    const size_t pad = (64 - total % 64) % 64;
    dict.append(pad, ' ');
    dict.push_back('\n');
    const size_t hlen = dict.size();
    std::string h(kMagic, kMagicLen);
    h.push_back('\x01');
    h.push_back('\x00');
    h.push_back(static_cast<char>(hlen & 0xff));
    h.push_back(static_cast<char>((hlen >> 8) & 0xff));
    return h + dict;
}

void writeNpy(const std::string& path, const std::vector<size_t>& shape, const float* data) {
    const std::string h = npyHeader(shape);
    size_t count = 1;
    for (size_t d : shape) count *= d;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("npy file '" + path + "': cannot open for writing");
    f.write(h.data(), static_cast<std::streamsize>(h.size()));
    if (count) f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * 4));
    f.close();
    if (!f) throw std::runtime_error("npy file '" + path + "': write failed");
}

void writeNpy(const std::string& path, const NpyArray& a) {
    size_t count = 1;
    for (size_t d : a.shape) count *= d;
    if (count != a.data.size())
        throw std::invalid_argument("writeNpy: shape has " + std::to_string(count) + " elements but data has " +
                                    std::to_string(a.data.size()));
    writeNpy(path, a.shape, a.data.data());
}

}  // namespace stepgen
