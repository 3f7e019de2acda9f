#pragma once
// ConfigImage: the value of every configuration field of every unit and context, and its
// packed form (the bitstream). Layout: arch/config_layout.hpp; format: docs/hardware.md s.5.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/config_layout.hpp"
#include "map/mapping.hpp"

namespace stepgen {

/// values[slot][ctx][field] in the order of ConfigLayout::slots and KindLayout::fields, and
/// the two fabric-wide words (docs/hardware.md section 5).
struct ConfigImage {
  std::vector<std::vector<std::vector<uint64_t>>> values;
  uint32_t sections = 1;        ///< sections of the program
  uint32_t sectionsLoaded = 1;  ///< sections whose configuration the contexts hold
  bool operator==(const ConfigImage& o) const {
    return values == o.values && sections == o.sections && sectionsLoaded == o.sectionsLoaded;
  }
};

/// All-zero image (every unit disabled) shaped by the layout.
ConfigImage emptyImage(const ConfigLayout& l);

/// The image of a mapping: its field values (Mapping::fields, set by mapGraph's
/// configureUnits, which checked them) in layout `l` (whose contexts hold m.sections), and
/// the sections words. Only encodes: every error is the mapper's. Throws std::logic_error
/// for a unit without a slot in `l`.
ConfigImage buildConfig(const Mapping& m, const ConfigLayout& l);

/// Packs the image: bit `bitOf(unit, ctx, field)` upward, little-endian 32-bit words.
/// Values wider than their field are an internal error (std::logic_error).
std::vector<uint32_t> encodeBitstream(const ConfigImage& img, const ConfigLayout& l);
/// Inverse of encodeBitstream. Throws std::runtime_error if the word count differs.
ConfigImage decodeBitstream(const std::vector<uint32_t>& words, const ConfigLayout& l);

/// Readable text: one line per non-zero field, sorted by unit name, context and field,
/// e.g. `u_cu_x1_y0 ctx0 func = 1`. Deterministic.
std::string configText(const ConfigImage& img, const ConfigLayout& l, const ArchModel& a);

/// Bytes <-> words (little-endian) for the .bin file.
std::vector<uint8_t> wordsToBytes(const std::vector<uint32_t>& w);
std::vector<uint32_t> bytesToWords(const std::vector<uint8_t>& b);

}  // namespace stepgen
