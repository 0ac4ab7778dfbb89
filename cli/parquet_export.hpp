#pragma once
// `torchsweep export --format parquet --out DIR` (docs/query.md): the
// export's tables (readers/export.hpp) handed to the Parquet writer,
// torchsweep-parquet beside this binary, which runs in the analysts' venv
// (pyarrow: Debian ships no C++ Parquet library, and a writer of our own
// would be a second implementation of a file format). It writes
// DIR/results.parquet and DIR/steps.parquet, each renamed into place only
// once both are written.
#include <filesystem>

#include "readers/vocabulary.hpp"

namespace ts::cli {

// Throws ts::InvalidInput naming --out when `folder` is not an existing
// folder, std::runtime_error when the writer is missing or fails.
void export_parquet(readers::Database& database, const readers::ResultFilter& filter,
                    const std::filesystem::path& folder);

}  // namespace ts::cli
