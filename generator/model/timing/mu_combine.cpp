// MuCombine: rtl_templates/sg_combine.sv inside sg_mu (combine mode): the meta entries (in1)
// are taken one beat per cycle whenever they come; the expert output rows (in0) of entry n
// only from the cycle after entry n was taken; output as sg_route's. docs/hardware.md s.7.
#include "model/timing/units.hpp"

namespace stepgen::timing {

int64_t MuCombine::waitFor(TimingModel& m, size_t p, size_t i) {
  if (p != 0 || metaOf[i] == SIZE_MAX) return 0;
  const int64_t s = inStart(m, 1, metaOf[i]);
  return s == kUnknown ? kUnknown : s + 1;
}

}  // namespace stepgen::timing
