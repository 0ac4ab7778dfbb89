#pragma once
// Exceptions that cross module boundaries, and the exit codes every
// torchsweep program shares (docs/exit-codes.md).
#include <stdexcept>
#include <string>

#include "shared/runner_contract.hpp"

namespace ts {

// The codes themselves are spelled in schemas/runner_contract.json.
namespace exit_code = runner_contract::exit_code;

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
