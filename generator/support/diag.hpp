#pragma once
// Diagnostics: located errors that every stage reports the same way.
// Format (docs/architecture.md#stages): `file:line:col: error[G-xxx]: message`,
// then the source line with a caret, then `note:` lines. Ids are listed in diag_ids.md.
#include <stdexcept>
#include <string>
#include <vector>

namespace stepgen {

/// A place in an input file; line and col are 1-based, 0 when unknown.
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
};

/// One note attached to a diagnostic (e.g. "the producer of stream x is here").
struct DiagNote {
  SourceLoc loc;
  std::string message;
};

/// One error with a stable id (see diag_ids.md), location and related notes.
struct Diagnostic {
  std::string id;  ///< e.g. "G-203"
  SourceLoc loc;
  std::string message;
  std::vector<DiagNote> notes;
};

/// Thrown by a stage that cannot continue; carries one or more diagnostics.
struct DiagError : std::runtime_error {
  std::vector<Diagnostic> diags;
  explicit DiagError(std::vector<Diagnostic> d);
  DiagError(std::string id, SourceLoc loc, std::string message, std::vector<DiagNote> notes = {});
};

/// Runs `f`, appending the diagnostics of a DiagError it throws to `out` instead of stopping,
/// so a loader reports every mistake of a file at once.
template <class F>
void collectDiagnostics(std::vector<Diagnostic>& out, F&& f) {
  try {
    f();
  } catch (const DiagError& e) {
    out.insert(out.end(), e.diags.begin(), e.diags.end());
  }
}

/// Renders a diagnostic with the offending source line and a caret when the file is readable.
std::string formatDiagnostic(const Diagnostic& d);

}  // namespace stepgen
