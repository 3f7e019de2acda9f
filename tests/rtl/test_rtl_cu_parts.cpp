// The compute unit's parts (rtl_templates/sg_cu_{mac,addr,word,rowred}.sv), each verilated
// alone at W = 4, LANES = 4 (tests/rtl_units.cmake) and driven port by port against plain C++
// with sim/common/fp.hpp; sg_cu's own tests (test_rtl_cu.cpp) run them inside the unit.
//   * sg_cu_mac (fp32 synthesis body; bf16 simulation body): random k steps and lane masks;
//     stage 2 one cycle after stage 1, each lane's sum = fp32Add(k == 0 ? +0 : sum, a * b).
//   * sg_cu_addr: the static operand addresses (i = o >> log2n, j = o & (N - 1)), the banked
//     rotations and a's copy for ragged rows, the active lanes, and with bt the divider setup
//     (bt_rdy after $clog2(LANES + 1) cycles) and every pass's (i, j) = (o / N, o % N); built
//     twice, without and with HOLD (the addresses held while their inputs stay), each case
//     checked again after a clock edge with the same inputs.
//   * sg_cu_word: add, sub, mul, silu, exp, recip, rsqrt (the last four read a cycle ahead),
//     rowscale, accum, accum max, scan max exclusive and accum rescale (two stages).
//   * sg_cu_rowred: the tree (rowReduce's pairwise order), its RP = 2 stages in lockstep
//     with stalls, the fold across beats and the DONE flag.
#include <catch2/catch.hpp>

#include <array>
#include <memory>
#include <random>

#include "Vsg_cu_addr.h"
#include "Vsg_cu_addr_hold.h"
#include "Vsg_cu_mac_bf16.h"
#include "Vsg_cu_mac_fp32.h"
#include "Vsg_cu_rowred.h"
#include "Vsg_cu_word.h"
#include "arch/config_layout.hpp"
#include "common/fp.hpp"
#include "model/router.hpp"
#include "rtl_unit_util.hpp"

using namespace rtlu;
using stepgen::CuFunc;

namespace {

constexpr int kW = 4;      // words per beat of the parts' models
constexpr int kLanes = 4;  // MAC lanes

// A model with its own context (the default one, shared with the other unit tests in this
// executable, hung on construction after them).
template <class V>
struct Model {
  VerilatedContext ctx;
  std::unique_ptr<V> top = std::make_unique<V>(&ctx);
  ~Model() { top->final(); }
};

template <class V>
void clockEdge(V& t) {
  t.clk = 0;
  t.eval();
  t.clk = 1;
  t.eval();
  t.clk = 0;
  t.eval();
}

// Mostly ordinary values, sometimes zeros, infinities, NaN and tiny ones (the corner cases
// of the fp32 functions).
uint32_t randomWord(std::mt19937& rng) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                     0x00400000u, 0x3F800000u, 0xC2FE0000u};
  if (rng() % 8 == 0) return special[rng() % 8];
  std::uniform_real_distribution<float> d(-6.0f, 6.0f);
  return stepgen::floatToBits(d(rng));
}

template <class T>
std::array<uint32_t, kW> wordsOf(const T& port) {
  std::array<uint32_t, kW> w{};
  for (int i = 0; i < kW; ++i) w[size_t(i)] = uint32_t(getBits(port, unsigned(32 * i), 32));
  return w;
}

template <class V>
void macCase(bool bf16) {
  stepgen::enableFtzDaz();
  Model<V> model;
  V& t = *model.top;
  t.rst_n = 0;
  t.go = 0;
  clockEdge(t);
  t.rst_n = 1;
  std::mt19937 rng(bf16 ? 11 : 12);
  std::array<uint32_t, kLanes> sum{}, prod{};
  std::array<bool, kLanes> written{};  // lanes whose sum was written (the others: power-up values)
  bool prevGo = false, prevFirst = false;
  unsigned prevAct = 0;
  int k = 0;
  for (int c = 0; c < 400; ++c) {
    const bool go = rng() % 5 != 0;
    const unsigned act = go ? unsigned(rng() % 16) : 0u;
    const bool first = k == 0;
    t.go = go;
    t.act = uint8_t(act);
    t.kfirst = first;
    std::array<uint32_t, kLanes> a{}, b{};
    for (int l = 0; l < kLanes; ++l) {
      a[size_t(l)] = randomWord(rng);
      b[size_t(l)] = randomWord(rng);
      setBits(t.a, unsigned(32 * l), 32, a[size_t(l)]);
      setBits(t.b, unsigned(32 * l), 32, b[size_t(l)]);
    }
    t.eval();
    // Stage 2 of last cycle's step: the sums as this cycle's combinational output.
    REQUIRE(bool(t.sum_v) == prevGo);
    if (prevGo) {
      CHECK(unsigned(t.sum_act) == prevAct);
      for (int l = 0; l < kLanes; ++l)
        if (prevAct >> l & 1u) {
          sum[size_t(l)] = stepgen::fp32Add(prevFirst ? 0u : sum[size_t(l)], prod[size_t(l)]);
          written[size_t(l)] = prevFirst || written[size_t(l)];
        }
    }
    for (int l = 0; l < kLanes; ++l) {
      if (!written[size_t(l)]) continue;
      INFO("cycle " << c << " lane " << l);
      CHECK(uint32_t(getBits(t.sum, unsigned(32 * l), 32)) == sum[size_t(l)]);
    }
    for (int l = 0; l < kLanes; ++l)
      if (go && (act >> l & 1u))
        prod[size_t(l)] = bf16 ? stepgen::bf16Mul(a[size_t(l)], b[size_t(l)]) : stepgen::fp32Mul(a[size_t(l)], b[size_t(l)]);
    prevGo = go, prevAct = act, prevFirst = first;
    if (go) k = (k + 1) % 3;  // K = 3: a new sum from +0 every third step
    clockEdge(t);
  }
}

}  // namespace

TEST_CASE("sg_cu_mac: two stages, fp32 and bf16 products, lane masks", "[rtl][cu][cu_parts]") {
  SECTION("fp32, near/far adder (synthesis body)") { macCase<Vsg_cu_mac_fp32>(false); }
  SECTION("bf16, single-path adder (simulation body)") { macCase<Vsg_cu_mac_bf16>(true); }
}

namespace {

struct AddrIn {
  unsigned k = 4, log2n = 0, n = 1;
  unsigned abase0 = 0, abase1 = 0, bbase0 = 0, bbase1 = 0;
  bool sel = false, step = false;
  unsigned pbaseQ = 0, pbaseD = 0, kD = 0, mn = 0;
};

template <class V>
void setAddr(V& t, const AddrIn& in) {
  t.k = uint16_t(in.k);
  t.log2n = uint8_t(in.log2n);
  t.n = uint16_t(in.n);
  t.abase0 = uint8_t(in.abase0), t.abase1 = uint8_t(in.abase1);
  t.bbase0 = uint8_t(in.bbase0), t.bbase1 = uint8_t(in.bbase1);
  t.sel_d = in.sel;
  t.step = in.step;
  t.pbase_q = in.pbaseQ, t.pbase_d = in.pbaseD;
  t.k_d = uint16_t(in.kD);
  t.mn = in.mn;
}

// Lane l's fields of the outputs (MI = 8 address bits: BUF_WORDS = 256; RB = 2 rotation bits).
template <class V>
unsigned aAddr(const V& t, int l) { return unsigned(getBits(t.a_addr, unsigned(8 * l), 8)); }
template <class V>
unsigned bAddr(const V& t, int l) { return unsigned(getBits(t.b_addr, unsigned(8 * l), 8)); }
template <class V>
unsigned aRot(const V& t, int l) { return unsigned(getBits(t.a_rot, unsigned(2 * l), 2)); }
template <class V>
unsigned bRot(const V& t, int l) { return unsigned(getBits(t.b_rot, unsigned(2 * l), 2)); }

}  // namespace

namespace {

template <class V>
void addrStatic() {
  Model<V> model;
  V& t = *model.top;
  t.rst_n = 1;
  t.run = 1;
  t.mm = 1;
  t.bt = 0;
  t.klast = 0, t.plast = 0, t.p_q = 0, t.p_d = 0;
  std::mt19937 rng(5);
  AddrIn in;
  for (int c = 0; c < 1000; ++c) {
    // Odd cases change one input of the last case's only (a held address must follow it);
    // k_d stays below K.
    const int only = (c % 2) ? int(rng() % 12) : -1;
    const auto pick = [&](int i) { return only < 0 || only == i; };
    if (pick(0)) in.k = 1 + rng() % 12;
    if (pick(1)) in.log2n = rng() % 4;
    if (pick(2)) in.abase0 = 4 * (rng() % 64);
    if (pick(3)) in.abase1 = 4 * (rng() % 64);
    if (pick(4)) in.bbase0 = rng() % 256;
    if (pick(5)) in.bbase1 = rng() % 256;
    if (pick(6)) in.sel = rng() % 2;
    if (pick(7)) in.step = rng() % 4 != 0;
    if (pick(8)) in.pbaseQ = kLanes * (rng() % 8);
    if (pick(9)) in.pbaseD = kLanes * (rng() % 8);
    if (pick(10)) in.mn = rng() % 40;
    in.kD = pick(11) ? rng() % in.k : in.kD % in.k;
    setAddr(t, in);
    t.eval();
    const unsigned nMask = (1u << in.log2n) - 1;
    // Checked twice: as evaluated, and after a clock edge with the same inputs (held, with HOLD).
    for (int edge = 0; edge < 2; ++edge) {
      if (edge == 1) {
        clockEdge(t);
        t.eval();
      }
      for (int l = 0; l < kLanes; ++l) {
        INFO("case " << c << " edge " << edge << " lane " << l << " K " << in.k << " log2n " << in.log2n << " pbase_d " << in.pbaseD);
        const unsigned o = in.pbaseD + unsigned(l), i = o >> in.log2n, j = o & nMask;
        CHECK(bool(t.act >> l & 1u) == (in.step && in.pbaseQ + unsigned(l) < in.mn));
        CHECK(aAddr(t, l) == ((in.sel ? in.abase1 : in.abase0) + i * in.k + in.kD) % 256);
        CHECK(aRot(t, l) == i % kW);
        // A_COPIES = 2: word k of row i is read from copy 1 while it shares the beat row i - 1 began.
        const unsigned head = (i * in.k) % kW;
        CHECK(bool(t.a_copy >> l & 1u) == (head != 0 && head + in.kD < unsigned(kW)));
        CHECK(bAddr(t, l) == ((in.sel ? in.bbase1 : in.bbase0) + (in.kD << in.log2n) + j) % 256);
        CHECK(bRot(t, l) == 0);
        CHECK((t.b_copy >> l & 1u) == 0);
      }
    }
    clockEdge(t);
  }
  // Outside a matmul every output is 0.
  t.mm = 0;
  t.eval();
  CHECK(t.act == 0);
  CHECK(t.a_addr == 0);
  CHECK(t.b_addr == 0);
  CHECK(t.a_copy == 0);
}

template <class V>
void addrBt() {
  for (unsigned n : {1u, 3u, 4u, 5u, 7u}) {
    DYNAMIC_SECTION("N = " << n) {
      Model<V> model;
      V& t = *model.top;
      AddrIn in;
      in.k = 6, in.n = n, in.abase0 = 16, in.bbase0 = 100, in.kD = 2;
      setAddr(t, in);
      t.mm = 1, t.bt = 1, t.klast = 0, t.plast = 0, t.p_q = 0, t.p_d = 0;
      t.rst_n = 1;
      t.run = 0;
      clockEdge(t);
      t.run = 1;
      // $clog2(LANES + 1) = 3 divider steps from the first RUN cycle.
      for (int c = 0; c < 3; ++c) {
        t.eval();
        CHECK(t.bt_rdy == 0);
        clockEdge(t);
      }
      t.eval();
      REQUIRE(t.bt_rdy == 1);
      auto checkPass = [&](unsigned p) {
        const unsigned j0 = (p * kLanes) % n;
        for (int l = 0; l < kLanes; ++l) {
          INFO("pass " << p << " lane " << l);
          const unsigned o = p * kLanes + unsigned(l), i = o / n, j = o % n;
          CHECK(aAddr(t, l) == (in.abase0 + i * in.k + in.kD) % 256);
          CHECK(aRot(t, l) == i % kW);
          CHECK(bAddr(t, l) == (in.bbase0 + j * in.k + in.kD) % 256);
          CHECK(bRot(t, l) == j % kW);
          CHECK(bool(t.b_copy >> l & 1u) == (j < j0));
        }
      };
      checkPass(0);
      for (unsigned p = 0; p < 5; ++p) {
        // The pass's last k step: the addresses given are the next pass's.
        t.step = 1, t.klast = 1, t.plast = 0;
        t.p_q = uint16_t(p), t.p_d = uint16_t(p + 1);
        t.pbase_q = p * kLanes, t.pbase_d = (p + 1) * kLanes;
        t.eval();
        checkPass(p + 1);
        clockEdge(t);
        // A cycle without a step holds them.
        t.step = 0, t.klast = 0;
        t.p_q = uint16_t(p + 1);
        t.pbase_q = (p + 1) * kLanes;
        t.eval();
        checkPass(p + 1);
        clockEdge(t);
      }
    }
  }
}

}  // namespace

TEST_CASE("sg_cu_addr: static operand addresses, rotations, ragged rows, active lanes", "[rtl][cu][cu_parts]") {
  SECTION("computed every cycle") { addrStatic<Vsg_cu_addr>(); }
  SECTION("held while the inputs stay (HOLD = 1)") { addrStatic<Vsg_cu_addr_hold>(); }
}

TEST_CASE("sg_cu_addr: bt divider setup and every pass's (i, j)", "[rtl][cu][cu_parts]") {
  SECTION("computed every cycle") { addrBt<Vsg_cu_addr>(); }
  SECTION("held while the inputs stay (HOLD = 1)") { addrBt<Vsg_cu_addr_hold>(); }
}

namespace {

// One sg_cu_word cycle: this cycle's inputs, and x_next = next cycle's x.
struct WordBeat {
  std::array<uint32_t, kW> x{}, y{}, old{};
  bool has = false;
};

// rtlu::setWords for a beat's kW words
void setWordsOf(VlWide<4>& port, const std::array<uint32_t, kW>& w) { setWords(port, {w.begin(), w.end()}, 32 * kW); }

// Runs `n` random beats of `func` through sg_cu_word (go every cycle) and checks each
// result word against `want(beat, word, previous beat)`.
template <class F>
void wordCase(CuFunc func, int idx, bool running, F want) {
  stepgen::enableFtzDaz();
  Model<Vsg_cu_word> model;
  Vsg_cu_word& t = *model.top;
  std::mt19937 rng(100 + int(func));
  std::vector<WordBeat> beats(60);
  for (WordBeat& b : beats) {
    for (int i = 0; i < kW; ++i) {
      b.x[size_t(i)] = randomWord(rng);
      b.y[size_t(i)] = randomWord(rng);
      b.old[size_t(i)] = randomWord(rng);
    }
    b.has = rng() % 3 != 0;
  }
  const bool rescale = func == CuFunc::AccumRescale;
  t.func = uint8_t(func);
  t.idx = uint8_t(idx);
  t.running = running;
  t.rescale = rescale;
  t.rescale_take = 0;
  t.go = 0;
  setWordsOf(t.x_next, beats[0].x);
  clockEdge(t);
  for (size_t c = 0; c < beats.size(); ++c) {
    const WordBeat& b = beats[c];
    t.go = 1;
    t.rescale_take = rescale;
    t.has = b.has;
    setWordsOf(t.x, b.x);
    setWordsOf(t.y, b.y);
    setWordsOf(t.old, b.old);
    setWordsOf(t.x_next, c + 1 < beats.size() ? beats[c + 1].x : std::array<uint32_t, kW>{});
    t.eval();
    const auto res = wordsOf(t.res), excl = wordsOf(t.res_excl);
    for (int i = 0; i < kW; ++i) {
      if (rescale && c == 0) continue;  // the second stage holds no beat yet
      INFO("func " << int(func) << " beat " << c << " word " << i << " x " << std::hex << b.x[size_t(i)] << " y "
                   << b.y[size_t(i)] << " old " << b.old[size_t(i)]);
      const auto [r, e] = want(b, i, c > 0 ? beats[c - 1] : b);
      CHECK(res[size_t(i)] == r);
      CHECK(excl[size_t(i)] == e);
    }
    clockEdge(t);
  }
  t.go = 0;
  t.eval();
  CHECK(wordsOf(t.res) == std::array<uint32_t, kW>{});
}

using WordWant = std::pair<uint32_t, uint32_t>;

}  // namespace

TEST_CASE("sg_cu_word: the W-word unit's functions", "[rtl][cu][cu_parts]") {
  using namespace stepgen;
  const auto w = [](const WordBeat& b, int i) { return std::make_tuple(b.x[size_t(i)], b.y[size_t(i)], b.old[size_t(i)]); };
  SECTION("add, sub, mul") {
    wordCase(CuFunc::Add, 0, false, [&](const WordBeat& b, int i, const WordBeat&) {
      auto [x, y, o] = w(b, i);
      return WordWant{fp32Add(x, y), 0};
    });
    wordCase(CuFunc::Sub, 0, false, [&](const WordBeat& b, int i, const WordBeat&) {
      auto [x, y, o] = w(b, i);
      return WordWant{fp32Sub(x, y), 0};
    });
    wordCase(CuFunc::Mul, 0, false, [&](const WordBeat& b, int i, const WordBeat&) {
      auto [x, y, o] = w(b, i);
      return WordWant{fp32Mul(x, y), 0};
    });
  }
  SECTION("silu, exp, recip, rsqrt: read a cycle ahead on x_next") {
    wordCase(CuFunc::Silu, 0, false, [](const WordBeat& b, int i, const WordBeat&) { return WordWant{silu(b.x[size_t(i)]), 0}; });
    wordCase(CuFunc::Exp, 0, false, [](const WordBeat& b, int i, const WordBeat&) { return WordWant{fp32Exp(b.x[size_t(i)]), 0}; });
    wordCase(CuFunc::Recip, 0, false, [](const WordBeat& b, int i, const WordBeat&) { return WordWant{fp32Recip(b.x[size_t(i)]), 0}; });
    wordCase(CuFunc::Rsqrt, 0, false, [](const WordBeat& b, int i, const WordBeat&) { return WordWant{fp32Rsqrt(b.x[size_t(i)]), 0}; });
  }
  SECTION("rowscale: word idx of y scales every word") {
    wordCase(CuFunc::RowScale, 2, false, [](const WordBeat& b, int i, const WordBeat&) { return WordWant{fp32Mul(b.x[size_t(i)], b.y[2]), 0}; });
  }
  SECTION("accum, accum max, scan max exclusive: the running tile's beat") {
    wordCase(CuFunc::Accum, 0, true, [&](const WordBeat& b, int i, const WordBeat&) {
      auto [x, y, o] = w(b, i);
      return WordWant{fp32Add(b.has ? o : 0u, x), 0};
    });
    wordCase(CuFunc::AccumMax, 0, true, [&](const WordBeat& b, int i, const WordBeat&) {
      auto [x, y, o] = w(b, i);
      return WordWant{b.has ? fp32Max(o, x) : x, 0};
    });
    wordCase(CuFunc::ScanMaxExcl, 0, true, [&](const WordBeat& b, int i, const WordBeat&) {
      auto [x, y, o] = w(b, i);
      return WordWant{b.has ? fp32Max(o, x) : x, b.has ? o : 0xFF800000u};
    });
  }
  SECTION("accum rescale: old * y in the beat's cycle, + x in the next") {
    wordCase(CuFunc::AccumRescale, 0, true, [&](const WordBeat&, int i, const WordBeat& prev) {
      auto [x, y, o] = w(prev, i);
      return WordWant{fp32Add(fp32Mul(prev.has ? o : 0u, y), x), 0};
    });
  }
}

TEST_CASE("sg_cu_rowred: tree order, stages in lockstep, fold, DONE", "[rtl][cu][cu_parts]") {
  stepgen::enableFtzDaz();
  for (bool sum : {true, false}) {
    DYNAMIC_SECTION((sum ? "rowsum" : "rowmax")) {
      Model<Vsg_cu_rowred> model;
      Vsg_cu_rowred& t = *model.top;
      t.rst_n = 1;
      t.run = 0;
      t.sum = sum;
      t.eos = 0;
      t.first = 1;
      t.acc = 0;
      t.adv = 1;
      t.take = 0;
      clockEdge(t);
      t.run = 1;
      std::mt19937 rng(sum ? 3 : 4);
      // Beat b enters in cycle e_b (adv = 1 then); it reaches the last stage after RP = 2
      // shifts. Stalls (adv = 0) hold every stage.
      struct In {
        std::array<uint32_t, kW> w;
        int kind, last, stop;
      };
      std::vector<In> sent;
      std::vector<bool> slot(2, false);
      std::array<size_t, 2> at{};
      uint32_t prevRoot = 0;
      std::vector<uint32_t> prevWords;
      for (int c = 0; c < 120; ++c) {
        const bool adv = rng() % 4 != 0;
        const bool take = adv && rng() % 3 != 0;
        In in{};
        for (int i = 0; i < kW; ++i) in.w[size_t(i)] = randomWord(rng);
        in.kind = c == 110 ? DONE : DATA;
        in.last = int(rng() % 2), in.stop = int(rng() % 8);
        t.adv = adv;
        t.take = take;
        t.in_k = uint8_t(in.kind), t.in_l = uint8_t(in.last), t.in_s = uint8_t(in.stop);
        setWordsOf(t.in_d, in.w);
        // the fold: every other beat continues the previous one's row
        const bool first = c % 2 == 0 || prevWords.empty();
        t.first = first;
        t.acc = prevRoot;
        t.eval();
        // The last stage: what entered two shifts ago.
        INFO("cycle " << c);
        CHECK(bool(t.v) == slot[1]);
        if (slot[1]) {
          const In& b = sent[at[1]];
          CHECK(int(t.k) == b.kind);
          CHECK(int(t.l) == b.last);
          CHECK(int(t.s) == b.stop);
          if (b.kind == DATA) {
            const uint32_t root = stepgen::rowReduce(b.w.data(), kW, kW, sum);
            if (first) {
              CHECK(t.val == root);
            } else {
              // the row so far (prevRoot) and this beat: rowReduce over both beats' words
              std::vector<uint32_t> both = prevWords;
              both.insert(both.end(), b.w.begin(), b.w.end());
              CHECK(t.val == stepgen::rowReduce(both.data(), int64_t(both.size()), kW, sum));
            }
            prevRoot = root;
            prevWords.assign(b.w.begin(), b.w.end());
          }
        }
        const bool doneInside = (slot[0] && sent[at[0]].kind == DONE) || (slot[1] && sent[at[1]].kind == DONE);
        CHECK(bool(t.dn) == doneInside);
        if (adv) {
          slot[1] = slot[0], at[1] = at[0];
          slot[0] = take;
          if (take) {
            sent.push_back(in);
            at[0] = sent.size() - 1;
          }
        }
        clockEdge(t);
      }
    }
  }
}

namespace {

// 3,000 beats of e <= W gate logits drawn with ties, NaN, -inf, zeros and subnormals, every e
// and k, through sg_cu_word running `func`; each result against want(x, e, k, chosen) with
// chosen the model's topkSelect (itself tested against a plain selection loop,
// tests/unit/test_router.cpp). Returns the rows compared.
template <class Want>
int topkRows(stepgen::CuFunc func, uint32_t seed, Want want) {
  using namespace stepgen;
  Model<Vsg_cu_word> model;
  Vsg_cu_word& t = *model.top;
  std::mt19937 rng(seed);
  const uint32_t pool[] = {0x3F800000u, 0x3F800000u, 0xBF800000u, 0x7FC00000u, 0xFF800000u, 0x7F800000u, 0x00000000u,
                           0x80000000u, 0x00000001u, 0x40000000u};
  t.func = uint8_t(func);
  t.go = 1;
  int rows = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::array<uint32_t, kW> x{};
    for (uint32_t& v : x) v = rng() % 2 ? pool[rng() % std::size(pool)] : randomWord(rng);
    const int e = 1 + int(rng() % kW), k = 1 + int(rng() % uint32_t(e));
    t.topk_e = uint16_t(e);
    t.topk_k = uint16_t(k);
    setWordsOf(t.x, x);
    t.eval();
    INFO("trial " << trial << " e " << e << " k " << k << std::hex << " x " << x[0] << " " << x[1] << " " << x[2] << " " << x[3]);
    CHECK(wordsOf(t.res) == want(x, e, k, topkSelect(x.data(), e, k)));
    ++rows;
  }
  return rows;
}

}  // namespace

// topk (TOPK = 1): a beat of e <= W gate logits becomes the k chosen indices ascending in
// words 0 .. k-1, the rest 0.
TEST_CASE("sg_cu_word: topk chooses as the model's router", "[rtl][cu][cu_parts]") {
  auto want = [](const std::array<uint32_t, kW>&, int, int, const std::vector<int>& chosen) {
    std::array<uint32_t, kW> w{};
    for (size_t j = 0; j < chosen.size(); ++j) w[j] = uint32_t(chosen[j]);
    return w;
  };
  CHECK(topkRows(stepgen::CuFunc::TopK, 17, want) == 3000);
}

// topk_logits: the chosen words themselves in slot order, -inf in the rest of the beat.
TEST_CASE("sg_cu_word: topk_logits leaves the chosen logits first and -inf after them", "[rtl][cu][cu_parts]") {
  auto want = [](const std::array<uint32_t, kW>& x, int, int k, const std::vector<int>& chosen) {
    std::array<uint32_t, kW> w{};
    for (int j = 0; j < kW; ++j) w[size_t(j)] = j < k ? x[size_t(chosen[size_t(j)])] : 0xFF800000u;
    return w;
  };
  CHECK(topkRows(stepgen::CuFunc::TopKLogits, 23, want) == 3000);
}
