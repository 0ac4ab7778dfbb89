#include "shared/closest_names.hpp"

#include <algorithm>

namespace ts {
namespace {

// Edits to turn `a` into `b`: insertions, deletions, substitutions and
// swaps of two neighbours (the commonest typo), each one edit.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known,
                                       std::size_t count) {
  const auto limit = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, std::size_t>> near;  // (distance, index in known)
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (const auto distance = edit_distance(name, known[i]); distance <= limit) near.emplace_back(distance, i);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < near.size() && i < count; ++i) names.push_back(known[near[i].second]);
  return names;
}

}  // namespace ts
