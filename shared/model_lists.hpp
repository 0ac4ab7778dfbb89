#pragma once
// Model lists in agents' capabilities, by digest (docs/protocol.md, "Model
// lists"). A runner's --list-models (in each environment) is the largest
// part of an agent's hello, and the same on every agent of an image: about
// 128 KB an agent with a few library environments. An agent sends each
// list's digest in its place, and the list itself only when the coordinator
// asks for it in its welcome; the coordinator keeps each list once (the
// store's model_lists table). Where a list may be (the positions below), a
// capability holds either the names (agents before this change, local
// capabilities) or the digest: readers take both.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace ts::model_lists {

// "sha256:" and the SHA-256 of the list's JSON text, lower-case hex.
std::string digest_of(const nlohmann::json& names);
// Whether `value` is a digest where a list may be (a string, not an array).
bool is_digest(const nlohmann::json& value);

// Calls `visit` on each model list of `capabilities`: models.RUNNER and
// environments.ENV.models.RUNNER.
void for_each_list(nlohmann::json& capabilities, const std::function<void(nlohmann::json& list)>& visit);
void for_each_list(const nlohmann::json& capabilities, const std::function<void(const nlohmann::json& list)>& visit);

// Replaces each list of names in `capabilities` by its digest; returns the
// lists by digest (each once).
std::map<std::string, nlohmann::json> replace_by_digests(nlohmann::json& capabilities);

}  // namespace ts::model_lists
