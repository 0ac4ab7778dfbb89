#include "shared/timestamp.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <regex>

#include "shared/errors.hpp"

namespace ts {

std::string utc_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const auto length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%03dZ", static_cast<int>(millis));
  return text;
}

std::string utc_instant(const std::string& text, const std::string& field) {
  using namespace std::chrono;
  static const std::regex form(
      R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(Z|[+-]\d{2}:\d{2})?)");
  std::smatch part;
  const auto refuse = [&] {
    return InvalidInput(field,
                        "expected an ISO 8601 date or time such as 2026-11-30, 2026-11-30T18:00Z or "
                        "2026-11-30T18:00:30+01:00, got '" +
                            text + "'");
  };
  if (!std::regex_match(text, part, form)) throw refuse();
  const auto number = [&](int index) { return part[index].matched ? std::stoi(part[index].str()) : 0; };
  const year_month_day date{year(number(1)), month(static_cast<unsigned>(number(2))),
                            day(static_cast<unsigned>(number(3)))};
  const int hours = number(4), minutes = number(5), seconds = number(6);
  if (!date.ok() || hours > 23 || minutes > 59 || seconds > 60) throw refuse();
  const auto fraction = (part[7].str() + "000").substr(0, 3);
  auto instant = sys_days(date) + std::chrono::hours(hours) + std::chrono::minutes(minutes) +
                 std::chrono::seconds(seconds) + milliseconds(std::stoi(fraction));
  if (const auto zone = part[8].str(); zone.size() == 6) {
    const auto offset =
        std::chrono::hours(std::stoi(zone.substr(1, 2))) + std::chrono::minutes(std::stoi(zone.substr(4)));
    instant += zone[0] == '+' ? -offset : offset;  // 18:00+01:00 is 17:00Z
  }
  const auto day_start = floor<days>(instant);
  const year_month_day utc_date(day_start);
  const hh_mm_ss time(floor<milliseconds>(instant - day_start));
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(utc_date.year()),
                     static_cast<unsigned>(utc_date.month()), static_cast<unsigned>(utc_date.day()),
                     time.hours().count(), time.minutes().count(), time.seconds().count(), time.subseconds().count());
}

}  // namespace ts
