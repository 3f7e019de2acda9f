// ConfigLayout and bitstream: fields never overlap, and decode(encode(x)) == x.
#include <catch2/catch.hpp>

#include <random>

#include "bitstream/config_image.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {
}  // namespace

TEST_CASE("config layout: fields tile each kind's vector without overlap", "[bitstream]") {
  for (const char* f : {"/arch/default.yaml", "/arch/step_validation.yaml"}) {
    ArchModel a = loadArch(root() + f);
    ConfigLayout l = buildConfigLayout(a);
    REQUIRE(l.contexts >= 2);
    for (const KindLayout* k : {&l.ag, &l.cu, &l.mu}) {
      int next = 0;
      for (const auto& fld : k->fields) {
        CHECK(fld.lsb == next);
        next += fld.width;
      }
      CHECK(k->bits == next);
    }
    int word = 0;
    for (const auto& s : l.slots) {
      CHECK(s.wordBase == word);
      CHECK(s.words * 32 >= l.kindLayout(s.kind).bits * l.contexts);
      word += s.words;
    }
    CHECK(l.unitWords == word);
    CHECK(l.totalWords == word + 2);  // SECTIONS_LOADED and SECTIONS follow the units
    CHECK(l.sectionsLoadedWord() == word);
    CHECK(l.sectionsWord() == word + 1);
  }
}

TEST_CASE("bitstream: decode(encode(x)) == x for random images", "[bitstream]") {
  ArchModel a = loadArch(root() + "/arch/default.yaml");
  ConfigLayout l = buildConfigLayout(a);
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 50; ++trial) {
    ConfigImage img = emptyImage(l);
    for (size_t s = 0; s < img.values.size(); ++s) {
      const auto& k = l.kindLayout(l.slots[s].kind);
      for (auto& ctx : img.values[s])
        for (size_t f = 0; f < ctx.size(); ++f) {
          int w = k.fields[f].width;
          ctx[f] = w >= 64 ? rng() : rng() & ((uint64_t(1) << w) - 1);
        }
    }
    img.sections = uint32_t(rng() & 0xFFFF);
    img.sectionsLoaded = uint32_t(rng() & 0xFFFF);
    auto words = encodeBitstream(img, l);
    REQUIRE(int(words.size()) == l.totalWords);
    CHECK(decodeBitstream(words, l) == img);
    CHECK(bytesToWords(wordsToBytes(words)) == words);
  }
}

TEST_CASE("bitstream: a value is packed at its documented bit position", "[bitstream]") {
  ArchModel a = loadArch(root() + "/arch/default.yaml");
  ConfigLayout l = buildConfigLayout(a);
  ConfigImage img = emptyImage(l);
  // Context 1 of the second unit, field "enable" (bit 0 of the context vector).
  const auto& slot = l.slots.at(1);
  const auto& k = l.kindLayout(slot.kind);
  img.values[1][1][0] = 1;
  img.sections = 5;
  img.sectionsLoaded = 2;
  auto w = encodeBitstream(img, l);
  int64_t bit = int64_t(slot.wordBase) * 32 + k.bits;  // hand-computed: context 1 starts k.bits in
  for (size_t i = 0; i + 2 < w.size(); ++i)
    CHECK(w[i] == (int64_t(i) == bit / 32 ? (uint32_t(1) << (bit % 32)) : 0u));
  CHECK(w[w.size() - 2] == 2u);  // SECTIONS_LOADED
  CHECK(w[w.size() - 1] == 5u);  // SECTIONS
}

TEST_CASE("bitstream: a wrong word count is rejected", "[bitstream]") {
  ArchModel a = loadArch(root() + "/arch/default.yaml");
  ConfigLayout l = buildConfigLayout(a);
  std::vector<uint32_t> w(size_t(l.totalWords) + 1, 0);
  CHECK_THROWS_AS(decodeBitstream(w, l), std::runtime_error);
}
