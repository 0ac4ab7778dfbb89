// Reads [[x...], [y...]] pairs as one JSON array on stdin and prints, for
// each, torchsweep's Mann-Whitney U, two-sided p-value and method, so that
// mann_whitney_vs_scipy.py can hold them against scipy.
#include <iostream>
#include <nlohmann/json.hpp>

#include "shared/statistics.hpp"

int main() {
  const auto cases = nlohmann::json::parse(std::cin);
  nlohmann::json answers = nlohmann::json::array();
  for (const auto& pair : cases) {
    const auto x = pair.at(0).get<std::vector<double>>();
    const auto y = pair.at(1).get<std::vector<double>>();
    const auto test = ts::stats::mann_whitney_u(x, y);
    answers.push_back({{"u", test.u}, {"p", test.p_value}, {"exact", test.exact}});
  }
  std::cout << answers.dump() << "\n";
}
