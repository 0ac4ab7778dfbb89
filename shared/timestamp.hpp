#pragma once
#include <string>

namespace ts {
// The current UTC time as ISO 8601 with milliseconds: 2026-11-30T04:40:00.123Z.
std::string utc_timestamp();

// An ISO 8601 date or time as the instant it names, written as
// utc_timestamp() writes them, so that instants compare as strings. Accepted:
// 2026-11-30 (midnight UTC), 2026-11-30T18:00, 2026-11-30T18:00:30 and
// 2026-11-30T18:00:30.5, a space for the T, and a zone of Z (the default,
// UTC) or +HH:MM / -HH:MM. Fractions beyond milliseconds are cut. Throws
// ts::InvalidInput naming `field` for anything else.
std::string utc_instant(const std::string& text, const std::string& field);
}  // namespace ts
