#pragma once
// configureUnits: what each placed unit is configured to do, field by field -- the one home
// of the rules for whether an operator runs on its unit (like nextpnr's isValidBelForCell):
// tile and beat shapes, buffer sizes, walk depths, counts and every value's field width.
// mapGraph asks it for each mapping it makes, so the section planner (which tries cuts
// through mapGraph) and the bitstream writer (which only encodes Mapping::fields) learn
// nothing from a later stage.
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"
#include "map/mapping.hpp"
#include "passes/shape_check.hpp"

namespace stepgen {

/// The configuration field values of mapping `m` of `g` on `a` (fields of
/// buildConfigLayout(a)'s kinds; contexts are the ops' sections). Errors (DiagError, located
/// at the operator or the attribute that decides the value): M-302 operand/buffer tiles
/// larger than a unit's memory (bytes named), M-304 a function without hardware, M-305 a
/// tile that is not whole beats / 64-byte pieces, M-306 a dynamic operator outside its
/// fabric form, M-307 a walk deeper than the AG's 4 levels or a count/stride outside the
/// unit's range, M-308 a dimension that is not static where the unit needs a fixed size,
/// M-311 any other value wider than its configuration field (field, value and width named).
std::vector<FieldValue> configureUnits(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a);

}  // namespace stepgen
