#pragma once
// Shared by the combine-mode RTL tests (test_rtl_combine.cpp: sg_combine alone; test_rtl_mu.cpp:
// sg_mu in combine mode): one run's entries (the meta stream of sg_route), the expert output
// rows, and the expected output as a plain loop written from the sg_combine header.
#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

#include "route_ref.hpp"
#include "rtl_unit_util.hpp"

namespace rtlu {

/// One combine run: slots[n] = the slot of entry n (t*k + j), PAD for a padding entry.
struct CombineCase {
  int k = 2;
  int rb = 1;  ///< row beats (D = rb * W)
  std::vector<uint32_t> slots;
  int n() const { return int(slots.size()); }
};

/// Word i of expert output row n (row n pairs with entry n).
inline uint32_t rowWord(int n, int i) { return 0x20000u * uint32_t(n + 1) + uint32_t(i); }

/// The entries of a routing as sg_route's meta output (refRoute, meta mode): word1 of each
/// DATA beat. Returns the case; `meta` receives the beats themselves (for in1).
inline CombineCase combineFromRoute(RouteCase r, int W, int rb, std::vector<Beat>* meta = nullptr) {
  r.meta = true;
  const std::vector<Beat> m = refRoute(r, W);
  CombineCase c;
  c.k = r.k;
  c.rb = rb;
  for (const Beat& b : m)
    if (b.kind == DATA) c.slots.push_back(b.data[1]);
  if (meta) *meta = m;
  return c;
}

/// Meta-like entry beats for a hand-written slot list: word0 = token (slot / k) or PAD,
/// word1 = slot, word2/word3 filler, stop 1 on every third entry, then DONE.
inline std::vector<Beat> entryBeats(const CombineCase& c, int W) {
  std::vector<Beat> r;
  for (int n = 0; n < c.n(); ++n) {
    const uint32_t s = c.slots[size_t(n)];
    std::vector<uint32_t> d(size_t(W), 0xC0DE0000u + uint32_t(n));
    d[0] = s == PAD ? PAD : s / uint32_t(c.k);
    d[1] = s;
    r.push_back(dataBeat(d, true, n % 3 == 2 ? 1 : 0));
  }
  r.push_back(doneBeat(W));
  return r;
}

/// Expert output rows on in0: row n = rb beats of rowWord(n, i); `last` on the final beat
/// with a stop that must be ignored. Padding rows carry data too (to be dropped).
inline std::vector<Beat> rowBeats(const CombineCase& c, int W) {
  std::vector<Beat> r;
  for (int n = 0; n < c.n(); ++n)
    for (int b = 0; b < c.rb; ++b) {
      std::vector<uint32_t> d;
      for (int i = 0; i < W; ++i) d.push_back(rowWord(n, b * W + i));
      const bool last = b + 1 == c.rb;
      r.push_back(dataBeat(d, last, last ? n % 3 : 0));
    }
  r.push_back(doneBeat(W));
  return r;
}

/// The specification as a plain loop: the written slots ascending (a slot written twice keeps
/// the later row), each as rb beats; stop on the final beat 2 for the last slot, 1 when the
/// next written slot's token (slot / k) differs, else 0; then DONE.
inline std::vector<Beat> refCombine(const CombineCase& c, int W) {
  std::map<uint32_t, int> written;  // slot -> row
  for (int n = 0; n < c.n(); ++n)
    if (c.slots[size_t(n)] != PAD) written[c.slots[size_t(n)]] = n;
  std::vector<Beat> out;
  for (auto it = written.begin(); it != written.end(); ++it) {
    auto nx = std::next(it);
    const int stop = nx == written.end() ? 2 : (nx->first / uint32_t(c.k) != it->first / uint32_t(c.k) ? 1 : 0);
    for (int b = 0; b < c.rb; ++b) {
      std::vector<uint32_t> d;
      for (int i = 0; i < W; ++i) d.push_back(rowWord(it->second, b * W + i));
      const bool last = b + 1 == c.rb;
      out.push_back(dataBeat(d, last, last ? stop : 0));
    }
  }
  out.push_back(doneBeat(W));
  return out;
}

/// Written slots of a case (distinct non-padding slots).
inline int writtenSlots(const CombineCase& c) {
  std::map<uint32_t, int> w;
  for (uint32_t s : c.slots)
    if (s != PAD) w[s] = 1;
  return int(w.size());
}

}  // namespace rtlu
