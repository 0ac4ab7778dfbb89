#pragma once
// Exceptions that cross module boundaries, and the exit codes every
// torchsweep program shares (docs/exit-codes.md).
#include <stdexcept>
#include <string>

namespace ts {

namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int internal_error = 1;        // a bug or an unexpected environment failure
inline constexpr int invalid_input = 2;         // bad arguments, job, sweep or document; nothing was changed
inline constexpr int run_failed = 3;            // the work ran and failed; the reason is in the result
inline constexpr int unavailable = 4;           // a peer (coordinator, store) could not be reached or refused
inline constexpr int store_failed = 5;          // a write to the SQLite store failed; a restart resumes from it
inline constexpr int regression_confirmed = 6;  // torchsweep confirm: a regression was confirmed by its reruns
}  // namespace exit_code

// Input from outside (a file, the command line, the network) that breaks its
// contract. `field` is a path into the document, e.g. "axes.batch_size[2]";
// `origin` names the document (a file path), when known. The message reads
// "origin: field: problem".
class InvalidInput : public std::runtime_error {
 public:
  InvalidInput(std::string field, std::string problem, const std::string& origin = "")
      : std::runtime_error((origin.empty() ? "" : origin + ": ") + (field.empty() ? problem : field + ": " + problem)),
        field_(std::move(field)),
        problem_(std::move(problem)) {}
  const std::string& field() const noexcept { return field_; }
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string field_;
  std::string problem_;
};

}  // namespace ts
