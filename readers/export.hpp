#pragma once
// `torchsweep export` (docs/query.md): every stored result that passes a
// filter, one flat row each, with the store's own column names.
#include "readers/table.hpp"
#include "readers/vocabulary.hpp"

namespace ts::readers {

Table export_results(Database& database, const ResultFilter& filter);

}  // namespace ts::readers
