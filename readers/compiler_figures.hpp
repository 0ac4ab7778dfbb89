#pragma once
// The report's compiler section (docs/compiler.md, docs/report.md): what
// the compilers did across the selection, from the store.
#include <nlohmann/json.hpp>

#include "readers/query.hpp"
#include "store/sqlite.hpp"

namespace ts::readers {

// For the results `options.filter` selects, and `by_mode` their `--compare
// mode` table with the compile_time metric among its metrics:
//   points         one per configuration run both eager and compiled: its
//                  compiled compile time, its speedup, its break-even
//                  (iterations) and its runs failing the accuracy gate
//                  (the dashboard's compile time against speedup chart);
//   accuracy       per runner and compile mode (torch.compile's mode, else
//                  the compiler), the compiled runs the gate passed,
//                  failed and skipped;
//   break_reasons  Dynamo's graph-break reasons summed over the runs (each
//                  result's top_break_reasons), with the runs and models;
//   cache          per configuration run with both, the compile time cold
//                  and warm (compile_cache), and the break-even of each.
nlohmann::json compiler_figures(Database& database, const QueryOptions& options, const Table& by_mode);

}  // namespace ts::readers
