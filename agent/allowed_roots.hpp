#pragma once
// Where a job may read files on the node: only under the directories the
// agent was started with (--data-root for imagefolder data, --model-path for
// the user's own models), never wherever a job document from the network
// says. Paths are compared after resolving symbolic links and "..".
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

namespace ts::agent {

// The directory `folder` names: relative, under the first root that has it;
// absolute, only when it lies under a root. Throws
// ts::InvalidInput("data.folder") saying which roots were tried.
std::filesystem::path resolve_data_folder(const std::string& folder, const std::vector<std::filesystem::path>& roots);

// `job` with data.path set to its resolved folder, when it reads one; a job
// on synthetic data is returned as it is.
nlohmann::json with_data_path(nlohmann::json job, const std::vector<std::filesystem::path>& roots);

// The first root, resolved, under which the user's model of `model` lies:
// python:PACKAGE.MODULE:FACTORY's module (PACKAGE/MODULE.py or
// PACKAGE/MODULE/__init__.py) or torchscript:FILE's file. Throws
// ts::InvalidInput("model") naming the roots tried.
std::filesystem::path resolve_model_root(const std::string& model, const std::vector<std::filesystem::path>& roots);

// `job` with model_root set for a python: or torchscript: model; any other
// job is returned as it is.
nlohmann::json with_model_root(nlohmann::json job, const std::vector<std::filesystem::path>& roots);

}  // namespace ts::agent
