#include "readers/labels.hpp"

#include <algorithm>

#include "readers/sql_parts.hpp"
#include "readers/vocabulary.hpp"

namespace ts::readers {

std::string label_of(const nlohmann::json& row, const std::vector<std::string>& axes) {
  std::string text;
  for (const auto& axis : axes) {
    if (!row.contains(axis) || row.at(axis).is_null()) continue;
    auto value = json_text(row.at(axis));
    if (axis == "batch_size") value = "bs" + value;
    if (axis == "seq_len") value = "seq" + value;
    if (axis == "prompt_len") value = "prompt" + value;
    if (axis == "new_tokens") value = "+" + value + " tokens";
    if (axis == "gpus") value += value == "1" ? " rank" : " ranks";
    text += (text.empty() ? "" : " ") + value;
  }
  return text;
}

std::vector<std::string> configuration_axes_without(const std::string& axis) {
  auto axes = configuration_axes();
  std::erase(axes, axis);
  return axes;
}

}  // namespace ts::readers
