#pragma once
// `torchsweep export --to mlflow URI` (docs/analysis.md): every result the
// filter lets through becomes a run of an MLflow experiment (its sweep's
// name, or `experiment`): the configuration as params, the figures as
// metrics, provenance as tags, the result document as an artifact; a
// compiled run also gets its speedup over its eager partner
// (readers/eager_partners.hpp). torchsweep-mlflow, beside this binary,
// writes it with MLflow's own client in the MLflow venv.
#include <string>

#include "readers/vocabulary.hpp"

namespace ts::cli {

struct MlflowExport {
  std::string tracking_uri;
  std::string experiment;  // empty: each sweep's name
  std::string artifacts;   // empty: beside a local store, else the server's default
};

// Throws ts::InvalidInput naming --to when the target is not an MLflow
// store, std::runtime_error when it cannot be reached or the writer fails.
void export_mlflow(readers::Database& database, const readers::ResultFilter& filter, const MlflowExport& target);

}  // namespace ts::cli
