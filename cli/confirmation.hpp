#pragma once
// The confirmation step shared by `torchsweep confirm` and `torchsweep
// nightly` (docs/report.md): rerun each flagged regression once through the
// coordinator, wait, classify.
#include <chrono>
#include <map>
#include <string>

#include "cli/client.hpp"
#include "cli/table_renderer.hpp"
#include "readers/regressions.hpp"

namespace ts::cli {

// How long a waiting client bears an unreachable coordinator before it
// gives up (exit 4): a restart resumes every sweep from the store.
inline constexpr std::chrono::seconds coordinator_restart_grace{120};

// Waits until the coordinator reports the sweep finished, through a
// coordinator restart of up to coordinator_restart_grace. Throws
// std::runtime_error past `timeout`, or when the coordinator stays away.
void wait_for_sweep(const ClientSettings& client, const std::string& sweep_id, std::chrono::seconds timeout);

// Classifies the regressions of `options`; each configuration still only
// flagged is rerun first (`runs` each; 0: as many as it ran, at least 5).
readers::Table confirm_regressions(const ClientSettings& client, const std::string& db,
                                   const readers::RegressionOptions& options, int64_t runs,
                                   std::chrono::seconds timeout);

// --runs and --timeout-s of the confirmation reruns.
void add_confirmation_options(CLI::App* command, int64_t& runs, int64_t& timeout_s);
// The classified table, then a one-line count on stderr.
void print_classification(const readers::Table& table, Format format);

// classification -> how many rows have it.
std::map<std::string, int> count_classifications(const readers::Table& table);

}  // namespace ts::cli
