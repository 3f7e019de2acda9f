// foldSections: a program's sections onto the fabric's contexts, with the reloads the host
// writes while the fabric runs (bitstream/reload.hpp).
#include "bitstream/reload.hpp"

#include <algorithm>
#include <stdexcept>

namespace stepgen {

FabricProgram foldSections(const ConfigImage& wide, const ConfigLayout& wideLayout, const ConfigLayout& l) {
  if (wideLayout.slots.size() != l.slots.size()) throw std::logic_error("internal error: layouts of different arches");
  const int S = int(wide.sections), C = l.contexts;
  FabricProgram p;
  p.image = emptyImage(l);
  auto put = [&](ConfigImage& img, int section) {
    for (size_t si = 0; si < l.slots.size(); ++si) img.values[si][size_t(section % C)] = wide.values.at(si).at(size_t(section));
  };
  for (int k = 0; k < std::min(S, C); ++k) put(p.image, k);
  p.image.sections = uint32_t(S);
  p.image.sectionsLoaded = uint32_t(std::min(S, C));
  p.bitstream = encodeBitstream(p.image, l);

  ConfigImage cur = p.image;
  std::vector<uint32_t> words = p.bitstream;
  for (int k = C; k < S; ++k) {
    put(cur, k);
    cur.sectionsLoaded = uint32_t(k + 1);
    const std::vector<uint32_t> next = encodeBitstream(cur, l);
    SectionReload r{k, k - C, {}};
    for (size_t a = 0; a < next.size(); ++a)  // address order: SECTIONS_LOADED comes after the units
      if (next[a] != words[a] && int(a) != l.sectionsLoadedWord()) r.writes.push_back({uint32_t(a), next[a]});
    r.writes.push_back({uint32_t(l.sectionsLoadedWord()), next[size_t(l.sectionsLoadedWord())]});
    words = next;
    p.reloads.push_back(std::move(r));
  }
  return p;
}

}  // namespace stepgen
