#include "shared/sweep/sweep.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "shared/errors.hpp"
#include "shared/job_fields.hpp"
#include "shared/json_io.hpp"
#include "shared/models/catalogue.hpp"
#include "shared/schema.hpp"
#include "shared/sweep/suites.hpp"

namespace ts::sweep {
namespace {

nlohmann::json scalar(const YAML::Node& node) {
  const auto& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted: always a string
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (text == "null" || text == "~" || text.empty()) return nullptr;
  int64_t integer = 0;
  if (auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
      error == std::errc() && end == text.data() + text.size()) {
    return integer;
  }
  double real = 0;
  if (auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), real);
      error == std::errc() && end == text.data() + text.size()) {
    return real;
  }
  return text;
}

nlohmann::json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      auto array = nlohmann::json::array();
      for (const auto& item : node) array.push_back(to_json(item));
      return array;
    }
    case YAML::NodeType::Map: {
      auto object = nlohmann::json::object();
      for (const auto& entry : node) object[entry.first.as<std::string>()] = to_json(entry.second);
      return object;
    }
    case YAML::NodeType::Scalar:
      return scalar(node);
    default:
      return nullptr;
  }
}

// schemas/sweep.schema.json's top-level properties.
const nlohmann::json& properties() {
  static const auto schema = nlohmann::json::parse(schema::text("sweep.schema.json"));
  return schema.at("properties");
}

// The field `name` of `object`, or the default its schema `described` gives it.
template <class T>
T value_or_default(const nlohmann::json& object, const char* name, const nlohmann::json& described = properties()) {
  if (const auto found = object.find(name); found != object.end()) return found->get<T>();
  return described.at(name).at("default").get<T>();
}

// The properties of adaptive repeats (the object form of `repeats`).
const nlohmann::json& adaptive_properties() {
  for (const auto& form : properties().at("repeats").at("oneOf")) {
    if (form.value("type", "") == "object") return form.at("properties");
  }
  throw std::logic_error("sweep.schema.json: repeats has no object form");
}

// A job document with one field set, to check that field alone against the
// job schema; the required fields get placeholders that are always valid.
std::string field_problem(const std::string& key, const nlohmann::json& value) {
  if (key == "resolved") {
    return "not a field a sweep gives: the agent's resolution sets it (docs/worker.md)";
  }
  static const schema::Validator job_schema("job.schema.json");
  nlohmann::json probe{{"schema_version", 1}, {"model", "probe"}, {"batch_size", 1}};
  probe[key] = value;
  for (const auto& problem : job_schema.problems(probe)) {
    if (problem.field == key || problem.field.starts_with(key + ".")) {
      return problem.field == key && problem.expected.find("could not be validated") != std::string::npos
                 ? "'" + key + "' is not a job field (schemas/job.schema.json)"
                 : problem.expected;
    }
  }
  return "";
}

void check_fields(const nlohmann::json& object, const std::string& path, const std::string& origin) {
  for (const auto& [key, value] : object.items()) {
    if (const auto problem = field_problem(key, value); !problem.empty()) {
      throw InvalidInput(path + key, problem, origin);
    }
  }
}

bool matches(const nlohmann::json& configuration, const nlohmann::json& rule) {
  for (const auto& [key, value] : rule.items()) {
    if (!configuration.contains(key) || configuration.at(key) != value) return false;
  }
  return true;
}

// The cartesian product of the axes, in the order of their keys and values.
std::vector<nlohmann::json> product(const nlohmann::json& axes) {
  std::vector<nlohmann::json> out{nlohmann::json::object()};
  for (const auto& [key, values] : axes.items()) {
    std::vector<nlohmann::json> next;
    next.reserve(out.size() * values.size());
    for (const auto& partial : out) {
      for (const auto& value : values) {
        auto extended = partial;
        extended[key] = value;
        next.push_back(std::move(extended));
      }
    }
    out = std::move(next);
  }
  return out;
}

// Why a sweep's text cannot be read, and where.
struct Unreadable {
  std::size_t offset;
  std::string why;
};

// YAML's printable set (YAML 1.2, c-printable): tab, line feed, carriage
// return, U+0085 and everything from the space up but DEL, the C1 controls,
// surrogates, U+FFFE and U+FFFF. yaml-cpp does not enforce it, and a NUL it
// lets through comes out as invalid UTF-8.
bool yaml_printable(uint32_t code) {
  if (code < 0x20) return code == 0x09 || code == 0x0a || code == 0x0d;
  if (code >= 0x7f && code <= 0x9f) return code == 0x85;
  return code != 0xfffe && code != 0xffff;
}

// The first byte that is not well-formed UTF-8 (overlong forms, surrogates
// and code points above U+10FFFF included) or starts a character YAML does
// not allow, if any.
std::optional<Unreadable> first_unreadable(const std::string& text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const auto not_utf8 = [](std::size_t at) { return Unreadable{at, "not valid UTF-8"}; };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char lead = bytes[i];
    std::size_t length = 1;
    uint32_t code = lead, minimum = 0;
    if (lead < 0x80) {
    } else if ((lead & 0xe0) == 0xc0) {
      length = 2, code = lead & 0x1f, minimum = 0x80;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3, code = lead & 0x0f, minimum = 0x800;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4, code = lead & 0x07, minimum = 0x10000;
    } else {
      return not_utf8(i);
    }
    if (i + length > text.size()) return not_utf8(i);
    for (std::size_t k = 1; k < length; ++k) {
      if ((bytes[i + k] & 0xc0) != 0x80) return not_utf8(i);
      code = (code << 6) | (bytes[i + k] & 0x3f);
    }
    if (code < minimum || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return not_utf8(i);
    if (!yaml_printable(code))
      return Unreadable{i, fmt::format("a control character YAML does not allow (U+{:04X})", code)};
    i += length;
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json parse_yaml(const std::string& text, const std::string& origin) {
  // JSON strings must be UTF-8; finding out later would be an internal error.
  if (const auto unreadable = first_unreadable(text)) {
    throw InvalidInput("", unreadable->why + " at byte " + std::to_string(unreadable->offset), origin);
  }
  try {
    return to_json(YAML::Load(text));
  } catch (const YAML::Exception& error) {
    throw InvalidInput("",
                       "not valid YAML or JSON at line " + std::to_string(error.mark.line + 1) + ", column " +
                           std::to_string(error.mark.column + 1) + ": " + error.msg,
                       origin);
  }
}

nlohmann::json read_document(const std::string& path) { return parse_yaml(json_io::read_text(path), path); }

Sweep parse(const nlohmann::json& spec, const std::string& origin) {
  static const schema::Validator sweep_schema("sweep.schema.json");
  if (const auto problems = sweep_schema.problems(spec); !problems.empty()) {
    throw InvalidInput(problems.front().field, problems.front().expected, origin);
  }
  const auto& axes = spec.at("axes");
  Sweep sweep;
  sweep.name = spec.at("name");
  sweep.spec = spec;
  sweep.tags = value_or_default<std::vector<std::string>>(spec, "tags");
  if (const auto repeats = spec.find("repeats"); repeats != spec.end() && repeats->is_object()) {
    // Adaptive: min rounds now; the coordinator adds the others (docs/sweeps.md).
    AdaptiveRepeats rule;
    rule.min = value_or_default<int64_t>(*repeats, "min", adaptive_properties());
    rule.max = repeats->at("max").get<int64_t>();
    if (rule.max < rule.min) {
      throw InvalidInput("repeats.max", "must be at least repeats.min (" + std::to_string(rule.min) + ")", origin);
    }
    rule.compare = repeats->at("until").at("compare").get<std::string>();
    if (!axes.contains(rule.compare) || axes.at(rule.compare).size() != 2) {
      throw InvalidInput("repeats.until.compare",
                         "must name an axis with exactly two values, got '" + rule.compare + "'", origin);
    }
    rule.values = axes.at(rule.compare).get<std::vector<nlohmann::json>>();
    const auto& until = repeats->at("until");
    if (until.contains("ci_half_width")) rule.ci_half_width = until.at("ci_half_width").get<double>();
    if (until.contains("power")) {
      rule.power = until.at("power").get<double>();
      rule.slowdown = value_or_default<double>(until, "slowdown", adaptive_properties().at("until").at("properties"));
      rule.judge.alpha = until.value("alpha", rule.judge.alpha);
      rule.judge.threshold = until.value("threshold", rule.judge.threshold);
      rule.decided = value_or_default<bool>(until, "decided", adaptive_properties().at("until").at("properties"));
    }
    sweep.repeats = rule.min;
    sweep.adaptive = std::move(rule);
  } else if (const auto calibration = spec.find("calibration"); calibration != spec.end()) {
    // A/A: rounds of identical jobs, tagged so that the thresholds find them (docs/noise.md).
    if (spec.contains("repeats"))
      throw InvalidInput("calibration", "a calibration's rounds are its repeats: drop `repeats`", origin);
    sweep.repeats = calibration->at("rounds").get<int64_t>();
    sweep.calibration_nodes =
        value_or_default<int64_t>(*calibration, "nodes", properties().at("calibration").at("properties"));
    if (std::find(sweep.tags.begin(), sweep.tags.end(), RegressionRule{}.calibration_tag) == sweep.tags.end())
      sweep.tags.push_back(RegressionRule{}.calibration_tag);
  } else {
    sweep.repeats = value_or_default<int64_t>(spec, "repeats");
  }
  sweep.priority = value_or_default<int64_t>(spec, "priority");
  sweep.max_attempts = value_or_default<int64_t>(spec, "max_attempts");
  sweep.node_exclusive = value_or_default<bool>(spec, "node_exclusive");
  sweep.pinned = value_or_default<std::string>(spec, "placement") == "pinned";
  sweep.interleaved = value_or_default<std::string>(spec, "order") == "interleaved";
  sweep.seed = value_or_default<uint64_t>(spec, "seed");
  if (const auto pairing = spec.find("pairing"); pairing != spec.end()) {
    sweep.pair_axis = pairing->at("by").get<std::string>();
    if (!axes.contains(sweep.pair_axis) || axes.at(sweep.pair_axis).size() < 2) {
      throw InvalidInput("pairing.by", "must name an axis with two or more values, got '" + sweep.pair_axis + "'",
                         origin);
    }
  }
  const auto requirements = value_or_default<nlohmann::json>(spec, "requirements");
  const auto& described = properties().at("requirements").at("properties");
  sweep.requirements.gpu_type = value_or_default<std::string>(requirements, "gpu_type", described);
  sweep.requirements.min_gpu_memory_gb = value_or_default<double>(requirements, "min_gpu_memory_gb", described);
  sweep.requirements.labels = value_or_default<std::map<std::string, std::string>>(requirements, "labels", described);
  return sweep;
}

Sweep expand(const nlohmann::json& submitted, const std::string& origin) {
  // Suites resolved first: the sweep records the models they had when it was submitted.
  auto sweep = parse(with_suites(submitted, origin), origin);
  const auto& spec = sweep.spec;
  const auto& axes = spec.at("axes");
  for (const auto& [key, values] : axes.items()) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (const auto problem = field_problem(key, values[i]); !problem.empty()) {
        throw InvalidInput("axes." + key + "[" + std::to_string(i) + "]", problem, origin);
      }
    }
  }
  const auto fixed = value_or_default<nlohmann::json>(spec, "fixed");
  check_fields(fixed, "fixed.", origin);
  const auto excludes = value_or_default<nlohmann::json>(spec, "exclude");
  const auto includes = value_or_default<nlohmann::json>(spec, "include");
  for (std::size_t i = 0; i < excludes.size(); ++i)
    check_fields(excludes[i], "exclude[" + std::to_string(i) + "].", origin);
  for (std::size_t i = 0; i < includes.size(); ++i)
    check_fields(includes[i], "include[" + std::to_string(i) + "].", origin);

  std::vector<nlohmann::json> configurations;
  for (auto& configuration : product(axes)) {
    const bool excluded =
        std::any_of(excludes.begin(), excludes.end(), [&](const auto& rule) { return matches(configuration, rule); });
    if (!excluded) configurations.push_back(std::move(configuration));
  }
  for (const auto& extra : includes) {
    if (std::find(configurations.begin(), configurations.end(), extra) == configurations.end()) {
      configurations.push_back(extra);
    }
  }

  sweep.configurations = configurations.size();

  static const schema::Validator job_schema("job.schema.json");
  std::vector<std::pair<std::string, nlohmann::json>> documents;  // config key, job document
  const auto& knobs = models::all_knobs();
  std::set<std::string> fixed_knobs_taken;
  for (const auto& configuration : configurations) {
    nlohmann::json document{{"schema_version", 1}, {"sweep", sweep.name}};
    document.update(fixed);
    document.update(configuration);
    // A knob in fixed serves the configurations whose model takes it (docs/sweeps.md); one an axis or
    // include gives must be taken by its configuration's model (check_knobs below).
    for (const auto& knob : knobs) {
      if (!fixed.contains(knob) || configuration.contains(knob) || !document.contains("model")) continue;
      if (models::takes_knob(document.at("model").get<std::string>(), knob)) {
        fixed_knobs_taken.insert(knob);
      } else {
        document.erase(knob);
      }
    }
    if (const auto problems = job_schema.problems(document); !problems.empty()) {
      throw InvalidInput("axes",
                         "the configuration " + configuration.dump() +
                             " makes an invalid job: " + problems.front().field + ": " + problems.front().expected,
                         origin);
    }
    try {
      models::check_data(document);
      models::check_knobs(document);
      models::check_sequence(job_fields::with_defaults(document));
    } catch (const InvalidInput& error) {
      throw InvalidInput("axes", "the configuration " + configuration.dump() + " makes an invalid job: " + error.what(),
                         origin);
    }
    documents.emplace_back(configuration.dump(), std::move(document));
  }
  for (const auto& knob : knobs) {
    if (fixed.contains(knob) && !fixed_knobs_taken.contains(knob)) {
      throw InvalidInput("fixed." + knob, "no model of the sweep takes it", origin);
    }
  }

  // The units of run order: each configuration alone, or with pairing the
  // configurations of one pair together, in the axis's order.
  std::vector<std::vector<std::size_t>> units;
  std::map<std::string, std::size_t> unit_of_pair;
  for (std::size_t index = 0; index < documents.size(); ++index) {
    if (sweep.pair_axis.empty()) {
      units.push_back({index});
      continue;
    }
    const auto [found, added] =
        unit_of_pair.try_emplace(pair_key(documents[index].first, sweep.pair_axis), units.size());
    if (added) units.emplace_back();
    units[found->second].push_back(index);
  }
  // Each round of repeats in its own seeded shuffle (Fisher-Yates over
  // mt19937_64, whose sequence the standard fixes): the same sweep file
  // always gives the same order, and drift hits every configuration alike.
  // A pair runs A B in even rounds and B A in odd ones, so that a linear
  // drift on its node cancels over two rounds.
  std::mt19937_64 engine(sweep.seed);
  for (int64_t repeat = 0; repeat < sweep.repeats; ++repeat) {
    std::vector<std::size_t> order(units.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (sweep.interleaved) {
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[engine() % i]);
    }
    for (const auto unit : order) {
      auto members = units[unit];
      if (repeat % 2 == 1) std::reverse(members.begin(), members.end());
      for (const auto index : members) {
        sweep.jobs.push_back(
            {static_cast<int64_t>(sweep.jobs.size()), repeat, documents[index].first, documents[index].second});
      }
    }
  }
  return sweep;
}

std::string pair_key(const std::string& config_key, const std::string& axis) {
  auto configuration = nlohmann::json::parse(config_key);
  configuration.erase(axis);
  return configuration.dump();
}

std::string stored_pair_key(const std::string& config_key, const std::string& pair_axis) {
  return pair_axis.empty() ? std::string() : pair_key(config_key, pair_axis);
}

}  // namespace ts::sweep
