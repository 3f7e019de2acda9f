#include "harness/decision_log.hpp"

#include <stdexcept>
#include <string>

namespace stepgen::harness {

void DecisionLog::open(const std::filesystem::path& path) {
  if (path.empty()) return;
  file = std::fopen(path.string().c_str(), "w");
  if (!file) throw std::runtime_error("cannot write the decision log '" + path.string() + "'");
  std::fputs("cycle,section,unit,input\n", file);
}

void DecisionLog::close() {
  if (file) std::fclose(file);
  file = nullptr;
}

DecisionLog& decisionLog() {
  static DecisionLog d;
  return d;
}

}  // namespace stepgen::harness

// Called by sg_cu.sv at the rising edge on which a merge takes the first beat of a tile.
// `unit` is the instance's hierarchical name (%m): TOP.sg_top.u_cu_x1_y0, and with
// Verilator --hierarchical one more component, the hier block's module (...u_cu_x1_y0.sg_cu_c).
// The log keeps the last component the generator named (instance names start with "u_").
extern "C" void sg_decision(const char* unit, int src) {
  auto& d = stepgen::harness::decisionLog();
  if (!d.file) return;
  std::string path(unit), inst = path;
  for (size_t end = path.size(); end > 0;) {
    const size_t dot = path.rfind('.', end - 1);
    const size_t from = dot == std::string::npos ? 0 : dot + 1;
    if (path.compare(from, 2, "u_") == 0) {
      inst = path.substr(from, end - from);
      break;
    }
    if (dot == std::string::npos) break;
    end = dot;
  }
  std::fprintf(d.file, "%llu,%u,%s,%d\n", static_cast<unsigned long long>(d.cycle), d.section, inst.c_str(), src);
}
