#pragma once
// An explanation (readers/explanation.hpp) for people: aligned text for a
// terminal, or Markdown to paste into an issue tracker, with the command
// that reproduces each side.
#include <nlohmann/json.hpp>
#include <string>

namespace ts::readers {

std::string explanation_text(const nlohmann::json& explanation);
std::string explanation_markdown(const nlohmann::json& explanation);

}  // namespace ts::readers
