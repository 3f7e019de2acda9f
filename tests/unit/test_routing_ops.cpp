// Dynamic STeP operators (docs/step_semantics.md#operators; generator/model/routing_ops.hpp) on token
// streams. Every golden vector below was worked out by hand from the rules in
// routing_ops.hpp (derivation in the comment above it), never copied from the program.
//
// Stream notation used by the goldens (the `str`/`rows` helpers):
//   "7"    a Data element with no stop: a 1x2 row tile {7, 107} (id 7)
//   "7/2"  the same element with stop level 2
//   "S1"   a stop-only beat of level 1 (an empty group)
//   "{1}"  a selector element choosing output 1
//   "D"    done
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "common/fp.hpp"
#include "ir/stops.hpp"
#include "model/routing_ops.hpp"

using namespace stepgen;
using Kind = Token::Kind;

namespace {

Token tile(int64_t rows, int64_t cols, std::vector<uint32_t> d, int stop) {
  return Token::tile(rows, cols, std::move(d), stop);
}

// Parses the notation above into a stream of 1x2 row tiles {id, id + 100}.
TokenStream rows(const std::string& s) {
  std::istringstream is(s);
  std::string w;
  TokenStream out;
  while (is >> w) {
    if (w == "D") {
      out.push_back(Token::done());
    } else if (w[0] == 'S') {
      out.push_back(Token::stopOnly(std::stoi(w.substr(1))));
    } else {
      size_t slash = w.find('/');
      uint32_t id = uint32_t(std::stoul(w.substr(0, slash)));
      int stop = slash == std::string::npos ? 0 : std::stoi(w.substr(slash + 1));
      out.push_back(tile(1, 2, {id, id + 100}, stop));
    }
  }
  return out;
}

// Prints a stream in the same notation (a Data token by its first word; selectors by sel).
std::string str(const TokenStream& s) {
  std::string out;
  for (const Token& t : s) {
    if (!out.empty()) out += ' ';
    if (t.kind == Kind::Done) {
      out += "D";
      continue;
    }
    if (t.kind == Kind::Stop) {
      out += "S" + std::to_string(t.stop);
      continue;
    }
    if (!t.sel.empty()) {
      out += "{";
      for (size_t i = 0; i < t.sel.size(); ++i) out += (i ? "," : "") + std::to_string(t.sel[i]);
      out += "}";
    } else {
      out += std::to_string(t.data ? t.data->at(0) : 0u);
    }
    if (t.stop) out += "/" + std::to_string(t.stop);
  }
  return out;
}

TokenStream sels(const std::vector<std::pair<std::vector<int>, int>>& v) {
  TokenStream s;
  for (const auto& [sel, stop] : v) s.push_back(selectorToken(sel, stop));
  s.push_back(Token::done());
  return s;
}

std::vector<uint32_t> words(const Token& t) { return *t.data; }

}  // namespace

TEST_CASE("routing: selector and flag tokens", "[routing]") {
  Token s = selectorToken({0, 2}, 1);
  CHECK(s.kind == Kind::Data);
  CHECK(s.sel == std::vector<int>{0, 2});
  CHECK(s.stop == 1);
  CHECK(words(s) == std::vector<uint32_t>{0b101u});  // bit mask of outputs 0 and 2
  CHECK(tokenBeats(s, 4) == 1);
  CHECK(words(flagToken(1, 2)) == std::vector<uint32_t>{1u});
}

TEST_CASE("routing: partition of 4 one-row tiles, selectors {0},{2},{0,2},{} over 3 outputs (b = 0)", "[routing]") {
  // Rank-0 data 1 2 3 4 D; each element is a chunk (b = 0) and keeps stop 0.
  //   {0}   -> 1 to out0;   {2} -> 2 to out2;   {0,2} -> 3 to out0 and out2;   {} -> 4 dropped.
  // out0 = 1 3 D, out1 receives nothing = D, out2 = 2 3 D.
  TokenStream data = rows("1 2 3 4 D");
  TokenStream sel = sels({{{0}, 0}, {{2}, 0}, {{0, 2}, 0}, {{}, 0}});
  auto out = partition(data, sel, 3, 0);
  REQUIRE(out.size() == 3);
  CHECK(str(out[0]) == "1 3 D");
  CHECK(str(out[1]) == "D");
  CHECK(str(out[2]) == "2 3 D");
  // The duplicated tile is shared data, not a copy, and its words are intact.
  CHECK(out[0][1].data == out[2][1].data);
  CHECK(words(out[2][0]) == std::vector<uint32_t>{2, 102});

  // Reassemble with the same selectors (b = 0): each group closes with stop b + 1 = 1.
  //   {0} -> in0's 1 -> "1/1";  {2} -> in2's 2 -> "2/1";  {0,2} -> in0's 3 then in2's 3 ->
  //   "3 3/1";  {} -> empty group "S1".
  CHECK(str(reassemble(out, sel, 0)) == "1/1 2/1 3 3/1 S1 D");
}

TEST_CASE("routing: top-2 partition at b = 1 with empty groups", "[routing]") {
  // Rank-1 data, groups [1 2] [] [3] [4 5 6]:  1 2/1 S1 3/1 4 5 6/1 D.
  // Chunks at b = 1: c0 = [1 2], c1 = [] (the S1), c2 = [3], c3 = [4 5 6].
  // Top-2 selectors over 4 outputs: c0 -> {0,1}, c1 -> {1,2}, c2 -> {0,2}, c3 -> {1,2}.
  // Each chunk's last element gets stop b = 1, an empty chunk is S1:
  //   out0: c0 c2       = 1 2/1 3/1 D
  //   out1: c0 c1 c3    = 1 2/1 S1 4 5 6/1 D
  //   out2: c1 c2 c3    = S1 3/1 4 5 6/1 D
  //   out3: nothing     = D
  TokenStream data = rows("1 2/1 S1 3/1 4 5 6/1 D");
  TokenStream sel = sels({{{0, 1}, 0}, {{1, 2}, 0}, {{0, 2}, 0}, {{1, 2}, 0}});
  auto out = partition(data, sel, 4, 1);
  REQUIRE(out.size() == 4);
  CHECK(str(out[0]) == "1 2/1 3/1 D");
  CHECK(str(out[1]) == "1 2/1 S1 4 5 6/1 D");
  CHECK(str(out[2]) == "S1 3/1 4 5 6/1 D");
  CHECK(str(out[3]) == "D");

  // Reassemble (b = 1): per selector the chunks of the selected inputs in ascending order,
  // each chunk's last token at stop 1, the group's last token at stop b + 1 = 2:
  //   {0,1}: out0 [1 2], out1 [1 2]  -> 1 2/1 1 2/2
  //   {1,2}: out1 [],    out2 []     -> S1 S2
  //   {0,2}: out0 [3],   out2 [3]    -> 3/1 3/2
  //   {1,2}: out1 [4 5 6], out2 [4 5 6] -> 4 5 6/1 4 5 6/2
  CHECK(str(reassemble(out, sel, 1)) == "1 2/1 1 2/2 S1 S2 3/1 3/2 4 5 6/1 4 5 6/2 D");
}

TEST_CASE("routing: reassemble(partition(x)) is Promote(x, b) for one-hot selectors", "[routing]") {
  // x: rank 2, tensor 0 = rows [1 2] [3], tensor 1 = rows [] [4]:  1 2/1 3/2 S1 4/2 D.
  // Chunks at b = 1: [1 2] (stop 1), [3] (stop 2), [] (S1), [4] (stop 2).
  // One-hot selectors of x's outer shape [2, 2] (selector stop = chunk stop - b):
  //   {0}, {1}/1, {1}, {0}/1.
  // Partition: out0 = [1 2] [4] = 1 2/1 4/1 D;  out1 = [3] [] = 3/1 S1 D.
  // Reassemble: {0} t=0 -> 1 2/2;  {1} t=1 -> 3/3;  {1} t=0 -> empty chunk S1 raised to
  // S2;  {0} t=1 -> 4/3.  = 1 2/2 3/3 S2 4/3 D, which is Promote(x, 1) (s >= 1 -> s + 1).
  TokenStream x = rows("1 2/1 3/2 S1 4/2 D");
  TokenStream sel = sels({{{0}, 0}, {{1}, 1}, {{1}, 0}, {{0}, 1}});
  auto parts = partition(x, sel, 2, 1);
  CHECK(str(parts[0]) == "1 2/1 4/1 D");
  CHECK(str(parts[1]) == "3/1 S1 D");
  TokenStream back = reassemble(parts, sel, 1);
  CHECK(str(back) == "1 2/2 3/3 S2 4/3 D");
  // Same as applying promoteStop(s, 1) to x, with the same tiles.
  REQUIRE(back.size() == x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(back[i].kind == x[i].kind);
    if (x[i].kind != Kind::Done) CHECK(back[i].stop == promoteStop(x[i].stop, 1));
    if (x[i].kind == Kind::Data) CHECK(back[i].data == x[i].data);
  }

  // b = 0, rank-0 x = 1 2 3 D, selectors {1} {0} {1}: out0 = 2 D, out1 = 1 3 D;
  // reassemble puts each element in a group of one: 1/1 2/1 3/1 D = Promote(x, 0).
  TokenStream x0 = rows("1 2 3 D");
  TokenStream sel0 = sels({{{1}, 0}, {{0}, 0}, {{1}, 0}});
  auto p0 = partition(x0, sel0, 2, 0);
  CHECK(str(p0[0]) == "2 D");
  CHECK(str(p0[1]) == "1 3 D");
  CHECK(str(reassemble(p0, sel0, 0)) == "1/1 2/1 3/1 D");
}

TEST_CASE("routing: reassemble empty selections and selector stop tokens", "[routing]") {
  // b = 0; in0 = 1 3 D, in1 = 2 D. Rank-1 selector stream {0} {} {0,1}/1 S1 D:
  //   {0} t=0   -> 1/1
  //   {}  t=0   -> S1 (empty group)
  //   {0,1} t=1 -> 3 2/2 (group closes at b + 1 + t = 2)
  //   S1 (empty selector group) -> S(b + 1 + 1) = S2
  TokenStream sel = sels({{{0}, 0}, {{}, 0}, {{0, 1}, 1}});
  sel.insert(sel.end() - 1, Token::stopOnly(1));
  CHECK(str(reassemble({rows("1 3 D"), rows("2 D")}, sel, 0)) == "1/1 S1 3 2/2 S2 D");
}

TEST_CASE("routing: partition and reassemble errors", "[routing]") {
  TokenStream data = rows("1 2 D");
  CHECK_THROWS_AS(partition(data, sels({{{0}, 0}}), 2, 0), std::invalid_argument);              // too few selectors
  CHECK_THROWS_AS(partition(data, sels({{{0}, 0}, {{0}, 0}, {{1}, 0}}), 2, 0), std::invalid_argument);
  CHECK_THROWS_AS(partition(data, sels({{{0}, 0}, {{2}, 0}}), 2, 0), std::invalid_argument);    // index 2 of 2
  CHECK_THROWS_AS(partition(data, sels({{{1, 0}, 0}, {{0}, 0}}), 2, 0), std::invalid_argument); // not ascending
  CHECK_THROWS_AS(partition(rows("1 2"), sels({{{0}, 0}, {{0}, 0}}), 2, 0), std::invalid_argument);  // no DONE
  // b = 1 on a rank-0 stream: the chunk is never closed (rank above the stream's rank).
  CHECK_THROWS_AS(partition(data, sels({{{0}, 0}}), 2, 1), std::invalid_argument);
  // in0 has one chunk left over / runs out.
  CHECK_THROWS_AS(reassemble({rows("1 2 D")}, sels({{{0}, 0}}), 0), std::invalid_argument);
  CHECK_THROWS_AS(reassemble({rows("1 D")}, sels({{{0}, 0}, {{0}, 0}}), 0), std::invalid_argument);
}

TEST_CASE("routing: eagerMerge of two inputs in a given arrival order", "[routing]") {
  // b = 1. in0 = [1 2] [3]: 1 2/1 3/1 D; in1 = [] [4 5]: S1 4 5/1 D.
  // Arrival order 1, 0, 0, 1: in1's empty chunk (S1), in0's [1 2], in0's [3], in1's [4 5],
  // each whole (never interleaved), last element at stop 1; selector one-hot per chunk.
  std::vector<TokenStream> in = {rows("1 2/1 3/1 D"), rows("S1 4 5/1 D")};
  auto [data, sel] = eagerMerge(in, 1, {1, 0, 0, 1});
  CHECK(str(data) == "S1 1 2/1 3/1 4 5/1 D");
  CHECK(str(sel) == "{1} {0} {0} {1} D");
  // Partition by the merge's own selector gives the inputs back.
  auto back = partition(data, sel, 2, 1);
  CHECK(str(back[0]) == "1 2/1 3/1 D");
  CHECK(str(back[1]) == "S1 4 5/1 D");

  // b = 0 with an input that never sends anything (an expert with no token): in1 = D.
  auto [d0, s0] = eagerMerge({rows("1 2 D"), rows("D")}, 0, {0, 0});
  CHECK(str(d0) == "1 2 D");
  CHECK(str(s0) == "{0} {0} D");

  // The order must take exactly every input's chunks.
  CHECK_THROWS_AS(eagerMerge(in, 1, {0, 1, 1}), std::invalid_argument);     // in0: 1 of 2
  CHECK_THROWS_AS(eagerMerge(in, 1, {0, 0, 1, 1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(eagerMerge(in, 1, {0, 0, 1, 2}), std::invalid_argument);  // no input 2
}

TEST_CASE("routing: reshape 5 rows into chunks of 2 with padding", "[routing]") {
  // Rank-1 [1, 5]: 1 2 3 4 5/1 D, split dim 0 into ceil(5/2) = 3 x 2 -> [1, 3, 2] (rank 2).
  //   1 (k0) -> 0;  2 (k1, (k+1)%2 == 0) -> 1;  3 -> 0;  4 -> 1;
  //   5 (k4, stop 1 > b: dim ends, 5 % 2 != 0) -> keeps 0, then 1 padding zero tile with
  //   the closing stop 1 + 1 = 2.
  // data  = 1 2/1 3 4/1 5 0/2 D;  is-padding = 0 0/1 0 0/1 0 1/2 D.
  auto [data, pad] = reshape(rows("1 2 3 4 5/1 D"), 2, 0, true, 1, 2);
  CHECK(str(data) == "1 2/1 3 4/1 5 0/2 D");
  CHECK(str(pad) == "0 0/1 0 0/1 0 1/2 D");
  CHECK(words(data[5]) == std::vector<uint32_t>{0, 0});  // a 1x2 zero tile
  CHECK(data[5].rows == 1);
  CHECK(data[5].cols == 2);

  // Rank-1 with an empty group: [1 2 3] [] [4 5] = 1 2 3/1 S1 4 5/1 D.
  //   group 0: 1 2/1 3 + pad 0/2;  S1 -> S2 (an empty group has no chunk);  group 2: 4 5/2.
  auto [d2, p2] = reshape(rows("1 2 3/1 S1 4 5/1 D"), 2, 0, true, 1, 2);
  CHECK(str(d2) == "1 2/1 3 0/2 S2 4 5/2 D");
  CHECK(str(p2) == "0 0/1 0 1/2 S2 0 0/2 D");

  // Rank-0 [3]: dim 0 ends at DONE. Padded: 1 2/1 3 0/1 D; unpadded: a short (ragged) last
  // chunk 1 2/1 3/1 D.
  CHECK(str(reshape(rows("1 2 3 D"), 2, 0, true, 1, 2).first) == "1 2/1 3 0/1 D");
  CHECK(str(reshape(rows("1 2 3 D"), 2, 0, false, 1, 2).first) == "1 2/1 3/1 D");
  CHECK(str(reshape(rows("1 2 3 D"), 2, 0, false, 1, 2).second) == "0 0/1 0/1 D");
  // Rank-1 unpadded: 3 (k2, stop 1 > b, 3 % 2 != 0) closes the short chunk with 1 + 1 = 2.
  CHECK(str(reshape(rows("1 2 3/1 D"), 2, 0, false, 1, 2).first) == "1 2/1 3/2 D");

  // b = 1: [1, 4, 2] -> [1, 2, 2, 2]: rows close with 1 (k0), 2 (k1), 1 (k2); the last row
  // closes dim 1 (stop 2 > b) after 4 entries, 4 % 2 == 0 -> 2 + 1 = 3.
  CHECK(str(reshape(rows("1 2/1 3 4/1 5 6/1 7 8/2 D"), 2, 1, false, 1, 2).first) == "1 2/1 3 4/2 5 6/1 7 8/3 D");
  // b = 1 does not divide (3 rows into 2) / may not pad.
  CHECK_THROWS_AS(reshape(rows("1/1 2/1 3/2 D"), 2, 1, false, 1, 2), std::invalid_argument);
  CHECK_THROWS_AS(reshape(rows("1/1 2/2 D"), 2, 1, true, 1, 2), std::invalid_argument);
  CHECK_THROWS_AS(reshape(rows("1 D"), 0, 0, true, 1, 2), std::invalid_argument);
}

TEST_CASE("routing: expand to a ragged reference with an empty group", "[routing]") {
  // ref: groups [1 2 3] [] [4] = 1 2 3/1 S1 4/1 D; in (same shape, inner dim of size 1):
  // 10/1 20/1 30/1 D. b = 1: 10 fills group 0, 20 meets the empty group (S1 stays), 30 fills
  // group 2:  10 10 10/1 S1 30/1 D.
  CHECK(str(expand(rows("10/1 20/1 30/1 D"), rows("1 2 3/1 S1 4/1 D"), 1)) == "10 10 10/1 S1 30/1 D");
  // RepeatStatic(3) of 10 20/1 = Promote(0) (10/1 20/2) expanded to 3 elements per group:
  // 10 10 10/1 20 20 20/2 D (the last copy carries repeatLastStop(s) = s + 1).
  TokenStream rep = expand(rows("10/1 20/2 D"), rows("1 1 1/1 1 1 1/2 D"), 1);
  CHECK(str(rep) == "10 10 10/1 20 20 20/2 D");
  CHECK(rep[5].stop == repeatLastStop(1));
  // b = 0: element-wise, ref's stops.
  CHECK(str(expand(rows("10 20/1 D"), rows("1 2/1 D"), 0)) == "10 20/1 D");
  // Stops that disagree, too few input tokens.
  CHECK_THROWS_AS(expand(rows("10/1 20/2 D"), rows("1 2/1 3/1 D"), 1), std::invalid_argument);
  CHECK_THROWS_AS(expand(rows("10/1 D"), rows("1 2/1 3/1 D"), 1), std::invalid_argument);
}

TEST_CASE("routing: scanAdd emits the running fp32 sum per group", "[routing]") {
  const uint32_t one = 0x3F800000u, two = 0x40000000u, three = 0x40400000u, six = 0x40C00000u,
                 half = 0x3F000000u, big = 0x4CBEBC20u /* 1e8 */, negZero = 0x80000000u;
  // b = 1, 1x1 tiles, groups [1 2 3] [] [0.5]:
  //   running sums 1, 3, 6/1 (reset), S1 copied (reset), 0.5/1.
  TokenStream in = {tile(1, 1, {one}, 0), tile(1, 1, {two}, 0), tile(1, 1, {three}, 1), Token::stopOnly(1),
                    tile(1, 1, {half}, 1), Token::done()};
  TokenStream out = scanAdd(in, 1);
  REQUIRE(out.size() == 6);
  CHECK(words(out[0]) == std::vector<uint32_t>{one});
  CHECK(words(out[1]) == std::vector<uint32_t>{three});
  CHECK(words(out[2]) == std::vector<uint32_t>{six});
  CHECK(out[2].stop == 1);
  CHECK(out[3].kind == Kind::Stop);
  CHECK(out[3].stop == 1);
  CHECK(words(out[4]) == std::vector<uint32_t>{half});
  CHECK(out[5].kind == Kind::Done);
  // fp32 rounding, 1x2 tiles: word 0 is 1e8, 1, 1 (ulp of 1e8 is 8: 1e8 + 1 rounds back to
  // 1e8 at every step); word 1 is -0, -0, +1 (+0 + -0 = +0, then +1).
  TokenStream r = scanAdd({tile(1, 2, {big, negZero}, 0), tile(1, 2, {one, negZero}, 0), tile(1, 2, {one, one}, 0),
                           Token::done()},
                          1 /* rank 0: never reset */);
  CHECK(words(r[0]) == std::vector<uint32_t>{big, 0u});
  CHECK(words(r[1]) == std::vector<uint32_t>{big, 0u});
  CHECK(words(r[2]) == std::vector<uint32_t>{big, one});
  // b = 0: every element is its own group: 1, 2, 3 unchanged.
  TokenStream s0 = scanAdd({tile(1, 1, {one}, 0), tile(1, 1, {two}, 0), Token::done()}, 0);
  CHECK(words(s0[1]) == std::vector<uint32_t>{two});
  CHECK_THROWS_AS(scanAdd({tile(1, 1, {one}, 0), tile(1, 2, {one, one}, 0), Token::done()}, 1), std::invalid_argument);
}

TEST_CASE("routing: scanMax emits the running fp32 max per group", "[routing]") {
  const uint32_t one = 0x3F800000u, two = 0x40000000u, mthree = 0xC0400000u, negZero = 0x80000000u,
                 nan = 0x7FC00001u;
  // b = 1, 1x2 tiles, groups [ (-3, -0) (1, +0?) (-3, nan) ] [ (2, -0) ]:
  //   word 0: -3, 1, 1 | 2 (the group's first tile as it is: -3, not max(+0, -3));
  //   word 1: -0, +0 (max(-0, +0) = +0), canonical NaN | -0.
  TokenStream in = {tile(1, 2, {mthree, negZero}, 0), tile(1, 2, {one, 0u}, 0), tile(1, 2, {mthree, nan}, 1),
                    tile(1, 2, {two, negZero}, 1), Token::done()};
  TokenStream out = scanMax(in, 1);
  REQUIRE(out.size() == 5);
  CHECK(words(out[0]) == std::vector<uint32_t>{mthree, negZero});
  CHECK(words(out[1]) == std::vector<uint32_t>{one, 0u});
  CHECK(words(out[2]) == std::vector<uint32_t>{one, kFp32QNaN});
  CHECK(out[2].stop == 1);
  CHECK(words(out[3]) == std::vector<uint32_t>{two, negZero});
  CHECK(out[4].kind == Kind::Done);
}

TEST_CASE("routing: flatMapRows dropping padding", "[routing]") {
  // Rank-0 stream of 2x2 tiles A = rows 1, 2; B = rows 3, 4; C = rows 5, pad; E = all pad.
  // Each row r of a tile is {r, r + 100}. Padding flags: A {0,0}, B {0,0}, C {0,1}, E {1}.
  auto two = [](uint32_t a, uint32_t b) { return tile(2, 2, {a, a + 100, b, b + 100}, 0); };
  TokenStream in = {two(1, 2), two(3, 4), two(5, 0), two(0, 0), Token::done()};
  TokenStream pad = {tile(2, 1, {0, 0}, 0), tile(2, 1, {0, 0}, 0), tile(2, 1, {0, 1}, 0), tile(1, 1, {1}, 0),
                     Token::done()};
  // Each tile -> a group of its rows, last row at stop 0 + 1 = 1; C keeps only row 5 (5/1);
  // E keeps nothing: an empty group S1.
  TokenStream out = flatMapRows(in, true, pad);
  CHECK(str(out) == "1 2/1 3 4/1 5/1 S1 D");
  CHECK(words(out[4]) == std::vector<uint32_t>{5, 105});
  CHECK(out[4].rows == 1);
  // Without dropping: every row, 0 0/1 for E.
  CHECK(str(flatMapRows(in, false)) == "1 2/1 3 4/1 5 0/1 0 0/1 D");
  // A Stop token S1 of the input becomes S2.
  CHECK(str(flatMapRows({two(1, 2), Token::stopOnly(1), Token::done()}, false)) == "1 2/1 S2 D");
  CHECK_THROWS_AS(flatMapRows(in, true, {Token::done()}), std::invalid_argument);
}

TEST_CASE("routing: reshape-pad, pack, flatMap-drop recovers the rows", "[routing]") {
  // Rank-0 rows 1..5 -> reshape(2, pad): 1 2/1 3 4/1 5 0/1 D, padding 0 0/1 0 0/1 0 1/1 D.
  auto [data, pad] = reshape(rows("1 2 3 4 5 D"), 2, 0, true, 1, 2);
  CHECK(str(data) == "1 2/1 3 4/1 5 0/1 D");
  CHECK(str(pad) == "0 0/1 0 0/1 0 1/1 D");
  // Pack each group of rows into one tile (what Accum(retile, 1) does), flags likewise.
  auto pack = [](const TokenStream& s, int64_t cols) {
    TokenStream o;
    std::vector<uint32_t> acc;
    for (const Token& t : s) {
      if (t.kind == Kind::Done) break;
      acc.insert(acc.end(), t.data->begin(), t.data->end());
      if (t.stop >= 1) o.push_back(tile(int64_t(acc.size()) / cols, cols, acc, t.stop - 1)), acc.clear();
    }
    o.push_back(Token::done());
    return o;
  };
  TokenStream tiles = pack(data, 2), flags = pack(pad, 1);
  REQUIRE(tiles.size() == 4);
  // flatMap with padding dropped: 1 2/1 3 4/1 5/1 D (rows 1..5 again, one group per tile).
  TokenStream out = flatMapRows(tiles, true, flags);
  CHECK(str(out) == "1 2/1 3 4/1 5/1 D");
}

TEST_CASE("routing: parallelize round-robins the outer dimension", "[routing]") {
  // Rank 1 (largest stop 1), tensors [1 2] [] [3] [4]: out0 gets tensors 0 and 2, out1 gets
  // 1 and 3, stops unchanged.
  auto out = parallelize(rows("1 2/1 S1 3/1 4/1 D"), 2);
  REQUIRE(out.size() == 2);
  CHECK(str(out[0]) == "1 2/1 3/1 D");
  CHECK(str(out[1]) == "S1 4/1 D");
  // Rank 0, 2 elements over 3 outputs: the third output is just D.
  auto o3 = parallelize(rows("1 2 D"), 3);
  CHECK(str(o3[0]) == "1 D");
  CHECK(str(o3[1]) == "2 D");
  CHECK(str(o3[2]) == "D");
  // Rank 2: tensors close with stop 2.
  auto r2 = parallelize(rows("1/1 2/2 3/2 D"), 2);
  CHECK(str(r2[0]) == "1/1 2/2 D");
  CHECK(str(r2[1]) == "3/2 D");
  CHECK_THROWS_AS(parallelize(rows("1 D"), 0), std::invalid_argument);
}
