#pragma once
// "Did you mean": the known names nearest a mistyped one, for errors that
// name what was expected (a model at submit, an axis in a query).
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// Up to `count` of `known`, nearest first by edit distance (insertions,
// deletions, substitutions, neighbours swapped; ties in `known`'s order), among those within a
// third of `name`'s length (at least 2 edits); empty when none is close.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known,
                                       std::size_t count = 3);

}  // namespace ts
