// buildConfig: a mapping's field values (map/unit_config.hpp) as a configuration image;
// encode/decode/text.
#include "bitstream/config_image.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "arch/unit_catalogue.hpp"

namespace stepgen {

ConfigImage emptyImage(const ConfigLayout& l) {
  ConfigImage img;
  for (const auto& s : l.slots)
    img.values.emplace_back(l.contexts, std::vector<uint64_t>(l.kindLayout(s.kind).fields.size(), 0));
  return img;
}

ConfigImage buildConfig(const Mapping& m, const ConfigLayout& l) {
  ConfigImage img = emptyImage(l);
  for (const FieldValue& f : m.fields) {
    const UnitConfigSlot* s = l.slot(f.unit);
    if (!s) throw std::logic_error("internal error: unit without slot");
    img.values.at(size_t(s - l.slots.data())).at(size_t(f.ctx)).at(size_t(f.field)) = f.value;
  }
  img.sections = img.sectionsLoaded = uint32_t(m.sections);
  return img;
}

std::vector<uint32_t> encodeBitstream(const ConfigImage& img, const ConfigLayout& l) {
  std::vector<uint32_t> w(l.totalWords, 0);
  for (size_t si = 0; si < l.slots.size(); ++si) {
    const auto& kl = l.kindLayout(l.slots[si].kind);
    for (int c = 0; c < l.contexts; ++c)
      for (size_t f = 0; f < kl.fields.size(); ++f) {
        uint64_t v = img.values.at(si).at(c).at(f);
        int width = kl.fields[f].width;
        if (width < 64 && (v >> width)) throw std::logic_error("internal error: config value wider than its field");
        int64_t bit = l.bitOf(l.slots[si].unit, c, kl.fields[f]);
        for (int i = 0; i < width; ++i)
          if ((v >> i) & 1) w[(bit + i) / 32] |= uint32_t(1) << ((bit + i) % 32);
      }
  }
  w[size_t(l.sectionsLoadedWord())] = img.sectionsLoaded;
  w[size_t(l.sectionsWord())] = img.sections;
  return w;
}

ConfigImage decodeBitstream(const std::vector<uint32_t>& w, const ConfigLayout& l) {
  if (int(w.size()) != l.totalWords)
    throw std::runtime_error(fmt::format("bitstream has {} words, the architecture's layout needs {}", w.size(), l.totalWords));
  ConfigImage img = emptyImage(l);
  for (size_t si = 0; si < l.slots.size(); ++si) {
    const auto& kl = l.kindLayout(l.slots[si].kind);
    for (int c = 0; c < l.contexts; ++c)
      for (size_t f = 0; f < kl.fields.size(); ++f) {
        int64_t bit = l.bitOf(l.slots[si].unit, c, kl.fields[f]);
        uint64_t v = 0;
        for (int i = 0; i < kl.fields[f].width; ++i)
          if ((w[(bit + i) / 32] >> ((bit + i) % 32)) & 1) v |= uint64_t(1) << i;
        img.values[si][c][f] = v;
      }
  }
  img.sectionsLoaded = w[size_t(l.sectionsLoadedWord())];
  img.sections = w[size_t(l.sectionsWord())];
  return img;
}

std::string configText(const ConfigImage& img, const ConfigLayout& l, const ArchModel& a) {
  const UnitCatalogue cat(a);
  std::vector<std::string> lines;
  for (size_t si = 0; si < l.slots.size(); ++si) {
    const auto& kl = l.kindLayout(l.slots[si].kind);
    for (int c = 0; c < l.contexts; ++c)
      for (size_t f = 0; f < kl.fields.size(); ++f)
        if (uint64_t v = img.values[si][c][f])
          lines.push_back(fmt::format("{} ctx{} {} = {}", cat.instanceName({l.slots[si].unit}), c, kl.fields[f].name, v));
  }
  std::sort(lines.begin(), lines.end());
  std::string out = fmt::format("# stepgen configuration for architecture '{}': {} words\n", a.name, l.totalWords);
  out += fmt::format("fabric sections = {}\nfabric sections_loaded = {}\n", img.sections, img.sectionsLoaded);
  for (const auto& s : lines) out += s + "\n";
  return out;
}

std::vector<uint8_t> wordsToBytes(const std::vector<uint32_t>& w) {
  std::vector<uint8_t> b;
  for (uint32_t x : w)
    for (int i = 0; i < 4; ++i) b.push_back(uint8_t(x >> (8 * i)));
  return b;
}

std::vector<uint32_t> bytesToWords(const std::vector<uint8_t>& b) {
  if (b.size() % 4) throw std::runtime_error("bitstream size is not a multiple of 4 bytes");
  std::vector<uint32_t> w(b.size() / 4);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = uint32_t(b[4 * i]) | uint32_t(b[4 * i + 1]) << 8 | uint32_t(b[4 * i + 2]) << 16 | uint32_t(b[4 * i + 3]) << 24;
  return w;
}

}  // namespace stepgen
