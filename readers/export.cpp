#include "readers/export.hpp"

#include <set>

#include "readers/sql_parts.hpp"

namespace ts::readers {

Table export_results(Database& database, const ResultFilter& filter) {
  const auto condition = condition_of(database, filter);
  static const std::vector<std::string> columns{"job_id",
                                                "attempt",
                                                "sweep_id",
                                                "status",
                                                "model",
                                                "task",
                                                "batch_size",
                                                "precision",
                                                "mode",
                                                "mode_ran",
                                                "compiler",
                                                "runner",
                                                "gpus",
                                                "device_name",
                                                "torch_version",
                                                "host",
                                                "agent",
                                                "median_epoch_s",
                                                "samples_per_s",
                                                "median_step_s",
                                                "compile_s",
                                                "warmup_s",
                                                "peak_memory_bytes",
                                                "peak_memory_field",
                                                "peak_allocated_bytes",
                                                "peak_reserved_bytes",
                                                "warmup_peak_memory_bytes",
                                                "noisy",
                                                "warmup_insufficient",
                                                "flops_per_step",
                                                "achieved_flops_per_s",
                                                "peak_flops_per_s",
                                                "mfu",
                                                "fused_kernels",
                                                "fallback_reason",
                                                "error",
                                                "received_at"};
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < columns.size(); ++i) sql += (i ? ", r." : "r.") + columns[i];
  sql += " FROM results r WHERE " + condition.sql + " ORDER BY r.received_at, r.job_id, r.attempt";
  auto select = database.prepare(sql);
  bind_condition(select, condition);
  Table table{columns, {}};
  static const std::set<std::string> real_columns{
      "median_epoch_s", "samples_per_s",        "median_step_s",    "compile_s", "warmup_s",
      "flops_per_step", "achieved_flops_per_s", "peak_flops_per_s", "mfu"};
  while (select.step()) {
    std::vector<nlohmann::json> row;
    for (int c = 0; c < static_cast<int>(columns.size()); ++c) {
      if (real_columns.contains(columns[c])) {
        row.push_back(select.is_null(c) ? nlohmann::json(nullptr) : nlohmann::json(select.real(c)));
      } else {
        row.push_back(cell(select, c));
      }
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace ts::readers
