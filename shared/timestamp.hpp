#pragma once
#include <string>

namespace ts {
// The current UTC time as ISO 8601 with milliseconds: 2026-11-30T04:40:00.123Z.
std::string utc_timestamp();
}  // namespace ts
