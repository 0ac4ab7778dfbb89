#include "agent/allowed_roots.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include "shared/errors.hpp"
#include "shared/lies_under.hpp"

namespace ts::agent {
namespace {

namespace fs = std::filesystem;

std::string listed(const std::vector<fs::path>& roots) {
  std::string text;
  for (const auto& root : roots) text += (text.empty() ? "" : ", ") + root.string();
  return text;
}

struct Found {
  fs::path root, path;  // both resolved
};

// The first of `candidates` (relative to a root, or absolute) that lies
// under a root once resolved and that `accept` takes, root by root.
std::optional<Found> find_under(const std::vector<fs::path>& candidates, const std::vector<fs::path>& roots,
                                const std::function<bool(const fs::path&)>& accept) {
  std::error_code error;
  for (const auto& root : roots) {
    const auto canonical_root = fs::weakly_canonical(root, error);
    if (error) continue;
    for (const auto& given : candidates) {
      const auto candidate = fs::weakly_canonical(given.is_absolute() ? given : root / given, error);
      if (!error && lies_under(candidate, canonical_root) && accept(candidate)) return Found{canonical_root, candidate};
    }
  }
  return std::nullopt;
}

bool is_directory(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// The files a user's model may be: python:A.B:F is A/B.py or A/B/__init__.py,
// torchscript:FILE is FILE; empty for any other model.
std::vector<fs::path> model_files(const std::string& model) {
  if (model.starts_with("torchscript:")) return {fs::path(model.substr(model.find(':') + 1))};
  if (!model.starts_with("python:")) return {};
  const auto module = model.substr(model.find(':') + 1, model.rfind(':') - model.find(':') - 1);
  fs::path relative;
  for (std::size_t start = 0;;) {
    const auto dot = module.find('.', start);
    relative /= module.substr(start, dot - start);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return {fs::path(relative).concat(".py"), relative / "__init__.py"};
}

}  // namespace

fs::path resolve_data_folder(const std::string& folder, const std::vector<fs::path>& roots) {
  if (roots.empty()) {
    throw InvalidInput("data.folder",
                       "'" + folder + "': this agent reads no data folders (start it with --data-root DIR)");
  }
  if (const auto found = find_under({fs::path(folder)}, roots, is_directory)) return found->path;
  throw InvalidInput("data.folder",
                     "'" + folder + "' is not a directory under the agent's data roots (" + listed(roots) + ")");
}

nlohmann::json with_data_path(nlohmann::json job, const std::vector<fs::path>& roots) {
  const auto data = job.find("data");
  if (data == job.end() || !data->is_object()) return job;
  (*data)["path"] = resolve_data_folder(data->at("folder").get<std::string>(), roots).string();
  return job;
}

fs::path resolve_model_root(const std::string& model, const std::vector<fs::path>& roots) {
  const auto files = model_files(model);
  if (files.empty()) throw std::logic_error("resolve_model_root: '" + model + "' is not a user's model");
  // The sweep's check refuses these already; an agent takes no job's word for it.
  for (const auto& file : files) {
    if (file.is_absolute() || std::find(file.begin(), file.end(), "..") != file.end()) {
      throw InvalidInput("model", "'" + model + "': names a path outside the agent's model roots");
    }
  }
  if (roots.empty()) {
    throw InvalidInput("model", "'" + model + "': this agent runs no user's models (start it with --model-path DIR)");
  }
  if (const auto found = find_under(files, roots, is_file)) return found->root;
  throw InvalidInput("model",
                     "'" + model + "': no " +
                         (files.size() == 1 ? files[0].string() : files[0].string() + " or " + files[1].string()) +
                         " under the agent's model roots (" + listed(roots) + ")");
}

nlohmann::json with_model_root(nlohmann::json job, const std::vector<fs::path>& roots) {
  const auto model = job.at("model").get<std::string>();
  if (model_files(model).empty()) return job;
  job["model_root"] = resolve_model_root(model, roots).string();
  return job;
}

}  // namespace ts::agent
