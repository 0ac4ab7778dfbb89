#include "cli/table_renderer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "readers/sql_parts.hpp"
#include "shared/errors.hpp"
#include "shared/statistics.hpp"

namespace ts::cli {

using readers::json_text;
using readers::row_objects;

Format parse_format(const std::string& text, const std::string& field) {
  if (text == "table") return Format::table;
  if (text == "csv") return Format::csv;
  if (text == "json") return Format::json;
  throw InvalidInput(field, "expected table, csv or json, got '" + text + "'");
}

namespace {

std::string display(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_number_float()) {
    const double x = value.get<double>();
    return std::abs(x) >= 1e4 ? fmt::format("{:.0f}", x) : fmt::format("{:.4g}", x);
  }
  return json_text(value);
}

std::string csv_field(const nlohmann::json& value) {
  auto text = value.is_number_float() ? fmt::format("{}", value.get<double>()) : json_text(value);
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string render(const Table& table, Format format, std::size_t width) {
  std::string out;
  if (format == Format::json) return row_objects(table).dump(2) + "\n";
  if (format == Format::csv) {
    for (std::size_t c = 0; c < table.columns.size(); ++c) out += (c ? "," : "") + csv_field(table.columns[c]);
    out += "\n";
    for (const auto& row : table.rows) {
      for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csv_field(row[c]);
      out += "\n";
    }
    return out;
  }
  // For people: columns equal on every row go to a caption line, an
  // estimate and its interval (X, X_low, X_high) share one column, and
  // relative changes read as percentages.
  std::vector<std::size_t> shown;
  std::string caption;
  const auto has_column = [&](const std::string& name) {
    return std::find(table.columns.begin(), table.columns.end(), name) != table.columns.end();
  };
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const auto& name = table.columns[c];
    if ((name.ends_with("_low") && has_column(name.substr(0, name.size() - 4))) ||
        (name.ends_with("_high") && has_column(name.substr(0, name.size() - 5)))) {
      continue;
    }
    const bool constant = table.rows.size() > 1 && !table.rows.front()[c].is_number_float() &&
                          std::all_of(table.rows.begin(), table.rows.end(),
                                      [&](const auto& row) { return row[c] == table.rows.front()[c]; });
    if (constant) {
      caption += (caption.empty() ? "" : ", ") + name + "=" + display(table.rows.front()[c]);
      continue;
    }
    shown.push_back(c);
  }
  const auto percent = [](const std::string& name) {
    return name.starts_with("memory_reduction") || name.ends_with("_change");
  };
  const auto text_of = [&](const std::vector<nlohmann::json>& row, std::size_t c) {
    const auto& name = table.columns[c];
    const auto shown_as = [&](const nlohmann::json& value) {
      return percent(name) && value.is_number() ? fmt::format("{:+.1f}%", value.get<double>() * 100) : display(value);
    };
    auto text = shown_as(row[c]);
    if (has_column(name + "_low") && !row[c].is_null()) {
      const auto low = static_cast<std::size_t>(std::find(table.columns.begin(), table.columns.end(), name + "_low") -
                                                table.columns.begin());
      text += row[low].is_null() ? fmt::format(" [n too small: < {} runs a side]", stats::minimum_runs_for_interval)
                                 : " [" + shown_as(row[low]) + ", " + shown_as(row[low + 1]) + "]";
    }
    return text;
  };
  std::vector<std::vector<std::string>> cells(1);
  for (const auto c : shown) {
    cells[0].push_back(table.columns[c] + (has_column(table.columns[c] + "_low") ? " [95% CI]" : ""));
  }
  for (const auto& row : table.rows) {
    std::vector<std::string> texts;
    for (const auto c : shown) texts.push_back(text_of(row, c));
    cells.push_back(std::move(texts));
  }
  std::vector<std::size_t> widths(shown.size(), 0);
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  if (!caption.empty()) {
    // Broken between its items where it would pass `width`.
    std::string line = "(all rows: ";
    for (std::size_t at = 0, next = 0; at < caption.size(); at = next) {
      next = std::min(caption.find(", ", at + 1) == std::string::npos ? caption.size() : caption.find(", ", at + 1),
                      caption.size());
      auto item = caption.substr(at, next - at);
      if (width > 0 && line.size() + item.size() + 1 > width && line.size() > 11) {
        out += line + (item.starts_with(", ") ? ",\n" : "\n");
        line = " " + (item.starts_with(", ") ? item.substr(1) : item);
      } else {
        line += item;
      }
    }
    out += line + ")\n";
  }
  // The leading columns of text name a row (the axes); the rest are
  // packed into blocks that fit `width`, each block behind those names.
  std::size_t names = 0;
  while (names < shown.size() && std::none_of(table.rows.begin(), table.rows.end(),
                                              [&](const auto& row) { return row[shown[names]].is_number(); })) {
    ++names;
  }
  if (names == shown.size()) names = 0;
  std::size_t names_width = 0;
  for (std::size_t i = 0; i < names; ++i) names_width += widths[i] + 2;
  std::vector<std::vector<std::size_t>> blocks(1);
  std::size_t block_width = names_width;
  for (std::size_t i = names; i < shown.size(); ++i) {
    if (width > 0 && blocks.back().size() > 0 && block_width + widths[i] > width) {
      blocks.emplace_back();
      block_width = names_width;
    }
    blocks.back().push_back(i);
    block_width += widths[i] + 2;
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0) out += "\n";
    std::vector<std::size_t> columns(names);
    std::iota(columns.begin(), columns.end(), std::size_t{0});
    columns.insert(columns.end(), blocks[b].begin(), blocks[b].end());
    for (std::size_t r = 0; r < cells.size(); ++r) {
      std::string line;
      for (std::size_t k = 0; k < columns.size(); ++k) {
        const auto i = columns[k];
        // Text left-aligned, figures right-aligned.
        const bool number = r > 0 && table.rows[r - 1][shown[i]].is_number();
        const auto pad = std::string(widths[i] - cells[r][i].size(), ' ');
        line += (k ? "  " : "") + (number ? pad + cells[r][i] : cells[r][i] + pad);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  if (table.rows.empty()) out += "(no results match)\n";
  return out;
}

}  // namespace ts::cli
