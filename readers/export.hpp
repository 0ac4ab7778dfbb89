#pragma once
// `torchsweep export` (docs/query.md): every stored result that passes a
// filter, one flat row each, and their timed steps, one row each with the
// result's key. The columns, their order and their types are spelled once,
// in schemas/result_columns.json, which the Parquet writer reads too.
#include <string>
#include <vector>

#include "readers/table.hpp"
#include "readers/vocabulary.hpp"
#include "store/result_columns.hpp"

namespace ts::readers {

using ExportColumn = store::Column;

// The tables the contract names ("results", "steps"), by name.
const std::vector<std::string>& export_tables();
// The columns of `table`; throws std::out_of_range for another name.
const std::vector<ExportColumn>& export_columns(const std::string& table);
// The rows of `table` for the results `filter` lets through: floats as
// numbers, integers and 0/1 flags as integers, text (timestamps too) as text.
Table export_table(Database& database, const ResultFilter& filter, const std::string& table);

}  // namespace ts::readers
