#include "support/diag.hpp"

#include <fmt/format.h>

#include <fstream>

namespace stepgen {

namespace {
std::string joinMessages(const std::vector<Diagnostic>& d) {
  std::string s;
  for (const auto& x : d) s += formatDiagnostic(x);
  return s;
}

std::string sourceLine(const SourceLoc& loc) {
  if (loc.file.empty() || loc.line <= 0) return {};
  std::ifstream in(loc.file);
  std::string line;
  for (int i = 0; i < loc.line && std::getline(in, line); ++i) {
  }
  return in ? line : std::string{};
}

std::string where(const SourceLoc& loc) {
  if (loc.file.empty()) return "<input>";
  if (loc.line <= 0) return loc.file;
  return fmt::format("{}:{}:{}", loc.file, loc.line, loc.col);
}
}  // namespace

DiagError::DiagError(std::vector<Diagnostic> d) : std::runtime_error(joinMessages(d)), diags(std::move(d)) {}

DiagError::DiagError(std::string id, SourceLoc loc, std::string message, std::vector<DiagNote> notes)
    : DiagError(std::vector<Diagnostic>{Diagnostic{std::move(id), std::move(loc), std::move(message), std::move(notes)}}) {}

std::string formatDiagnostic(const Diagnostic& d) {
  std::string out = fmt::format("{}: error[{}]: {}\n", where(d.loc), d.id, d.message);
  std::string src = sourceLine(d.loc);
  if (!src.empty()) {
    out += fmt::format("  {}\n  {}^\n", src, std::string(d.loc.col > 0 ? d.loc.col - 1 : 0, ' '));
  }
  for (const auto& n : d.notes) out += fmt::format("{}: note: {}\n", where(n.loc), n.message);
  return out;
}

}  // namespace stepgen
