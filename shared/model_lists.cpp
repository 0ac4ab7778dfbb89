#include "shared/model_lists.hpp"

#include "shared/digest.hpp"

namespace ts::model_lists {

namespace {
constexpr std::string_view prefix = "sha256:";
}

std::string digest_of(const nlohmann::json& names) { return std::string(prefix) + sha256_hex(names.dump()); }

bool is_digest(const nlohmann::json& value) {
  return value.is_string() && value.get_ref<const std::string&>().starts_with(prefix);
}

namespace {

// Both constnesses of the walk, written once.
template <typename Json, typename Visit>
void walk(Json& capabilities, const Visit& visit) {
  const auto lists_under = [&](Json& holder) {
    if (!holder.is_object() || !holder.contains("models")) return;
    auto& models = holder["models"];
    if (!models.is_object()) return;
    for (auto& [runner, list] : models.items()) visit(list);
  };
  if (!capabilities.is_object()) return;
  lists_under(capabilities);
  if (const auto environments = capabilities.find("environments");
      environments != capabilities.end() && environments->is_object()) {
    for (auto& [name, environment] : environments->items()) lists_under(environment);
  }
}

}  // namespace

void for_each_list(nlohmann::json& capabilities, const std::function<void(nlohmann::json& list)>& visit) {
  walk(capabilities, visit);
}

void for_each_list(const nlohmann::json& capabilities, const std::function<void(const nlohmann::json& list)>& visit) {
  walk(capabilities, visit);
}

std::map<std::string, nlohmann::json> replace_by_digests(nlohmann::json& capabilities) {
  std::map<std::string, nlohmann::json> lists;
  for_each_list(capabilities, [&](nlohmann::json& list) {
    if (!list.is_array()) return;
    auto digest = digest_of(list);
    lists.try_emplace(digest, std::move(list));
    list = std::move(digest);
  });
  return lists;
}

}  // namespace ts::model_lists
