#pragma once
// Where a job's imagefolder data may be read (docs/data.md): only under the
// directories the agent was started with (--data-root), never wherever a job
// document from the network says.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

namespace ts::agent {

// The directory `folder` names: relative, under the first root that has it;
// absolute, only when it lies under a root. Both are compared after
// resolving symbolic links and "..". Throws ts::InvalidInput("data.folder")
// saying which roots were tried.
std::filesystem::path resolve_data_folder(const std::string& folder, const std::vector<std::filesystem::path>& roots);

// `job` with data.path set to its resolved folder, when it reads one; a job
// on synthetic data is returned as it is.
nlohmann::json with_data_path(nlohmann::json job, const std::vector<std::filesystem::path>& roots);

}  // namespace ts::agent
