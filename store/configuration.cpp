#include "store/configuration.hpp"

namespace ts::store {

const std::vector<ConfigurationAxis>& configuration_axes() {
  static const std::vector<ConfigurationAxis> axes{
      {"model", "r.model"},
      {"task", "r.task"},
      {"batch_size", "r.batch_size"},
      // A language model's tokens a sample, and task generate's prompt and new tokens (docs/language-models.md).
      {"seq_len", "r.seq_len", true},
      {"prompt_len", "r.prompt_len", true},
      {"new_tokens", "r.new_tokens", true},
      {"precision", "r.precision"},
      {"mode", "COALESCE(r.mode_ran, r.mode)"},  // what ran: a compiled job that fell back counts as eager
      {"gpus", "r.gpus"},
      {"device_name", "r.device_name"},
      {"runner", "r.runner"},
      {"env", "r.env"},    // the environment it ran in (docs/environments.md)
      {"model_commit", "r.model_commit", true},  // the user's model code at a commit (docs/bisect.md)
      {"data", "r.data"},  // synthetic, or the imagefolder dataset's folder
      // The image layout that ran, none for models without images (job memory_format; TensorFlow and JAX run NHWC
      // whatever is asked), so that channels_last and contiguous runs of a PyTorch runner never pool.
      {"memory_format", "CASE r.data_layout WHEN 'NHWC' THEN 'channels_last' WHEN 'NCHW' THEN 'contiguous' END", true},
  };
  return axes;
}

std::string config_medians_view_sql() {
  std::string selected, names, qualified;
  for (const auto& axis : configuration_axes()) {
    selected += axis.sql + " AS " + axis.name + ", ";
    names += (names.empty() ? "" : ", ") + axis.name;
    qualified += (qualified.empty() ? "c." : ", c.") + axis.name;
  }
  // The exact median of each figure: the middle value, or the lower middle plus half the gap to the upper one (the
  // arithmetic of shared/statistics). Only SQL that SQLite and DuckDB read alike (docs/store.md): no integer
  // division, which DuckDB makes real; ORDER BY, unlike =, takes NULL keys as equal.
  return "CREATE VIEW config_medians AS\n"
         "WITH ok AS (\n"
         "  SELECT " +
         selected +
         "r.median_epoch_s, r.samples_per_s, r.peak_memory_bytes, r.compile_s\n"
         "  FROM results r\n"
         "  WHERE r.status = 'ok' AND NOT " +
         confirmation_run_sql +
         "\n"
         "),\n"
         "numbered AS (SELECT ok.*, DENSE_RANK() OVER (ORDER BY " +
         names +
         ") AS configuration FROM ok),\n"
         "figures (configuration, figure, value) AS (\n"
         "  SELECT configuration, 1, median_epoch_s FROM numbered\n"
         "  UNION ALL SELECT configuration, 2, samples_per_s FROM numbered\n"
         "  UNION ALL SELECT configuration, 3, peak_memory_bytes FROM numbered\n"
         "  UNION ALL SELECT configuration, 4, compile_s FROM numbered\n"
         "),\n"
         "ranked AS (\n"
         "  SELECT configuration, figure, value,\n"
         "         ROW_NUMBER() OVER (PARTITION BY configuration, figure ORDER BY value) AS k,\n"
         "         COUNT(*) OVER (PARTITION BY configuration, figure) AS n\n"
         "  FROM figures\n"
         "  WHERE value IS NOT NULL\n"
         "),\n"
         "medians AS (\n"
         "  SELECT configuration,\n"
         "         MAX(CASE figure WHEN 1 THEN middle END) AS median_epoch_s,\n"
         "         MAX(CASE figure WHEN 2 THEN middle END) AS samples_per_s,\n"
         "         MAX(CASE figure WHEN 3 THEN middle END) AS peak_memory_bytes,\n"
         "         MAX(CASE figure WHEN 4 THEN middle END) AS compile_s\n"
         "  FROM (SELECT configuration, figure, MIN(value) + 0.5 * (MAX(value) - MIN(value)) AS middle\n"
         "        FROM ranked\n"
         "        WHERE 2 * k BETWEEN n AND n + 2\n"
         "        GROUP BY configuration, figure)\n"
         "  GROUP BY configuration\n"
         "),\n"
         "counted AS (\n"
         "  SELECT configuration, " +
         names +
         ", COUNT(*) AS results\n"
         "  FROM numbered\n"
         "  GROUP BY configuration, " +
         names +
         "\n"
         ")\n"
         "SELECT " +
         qualified +
         ",\n"
         "       c.results, m.median_epoch_s, m.samples_per_s, m.peak_memory_bytes, m.compile_s\n"
         "FROM counted c LEFT JOIN medians m ON m.configuration = c.configuration";
}

bool config_medians_view_is_current(Database& database) {
  auto stored = database.prepare("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'config_medians'");
  return stored.step() && stored.text(0) == config_medians_view_sql();
}

void make_config_medians_view(Database& database) {
  if (config_medians_view_is_current(database)) return;
  Transaction transaction(database);
  database.execute("DROP VIEW IF EXISTS config_medians");
  database.execute(config_medians_view_sql());
  transaction.commit();
}

}  // namespace ts::store
