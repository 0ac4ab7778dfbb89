#include "shared/sweep/sweep.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "shared/errors.hpp"
#include "shared/sweep/suites.hpp"
#include "tests/shared/sweep_documents.hpp"

namespace ts::sweep {
namespace {

using testing::minimal;
using testing::refusal;

TEST(Sweep, ChannelsLastIsAnAxisOfImageModelsAndRefusedForOthers) {
  auto spec = minimal();
  spec["axes"]["model"] = {"resnet18"};
  spec["axes"]["memory_format"] = {"contiguous", "channels_last"};
  const auto sweep = expand(spec, "t.yaml");
  ASSERT_EQ(sweep.jobs.size(), 12u);
  EXPECT_EQ(sweep.jobs.back().document.at("memory_format"), "channels_last");
  spec["axes"]["model"] = {"resnet18", "gpt"};  // the decoder reads tokens
  try {
    expand(spec, "t.yaml");
    FAIL() << "channels_last accepted for a decoder";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("channels_last needs a model that reads images"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("'gpt' reads tokens"), std::string::npos) << error.what();
  }
}

// #49: a knob a model cannot take was dropped from the job, with a warning
// in the result. Now a job never carries one: a knob in fixed goes to the
// models that take it, and one no model takes, or one an axis or include
// gives a model that does not take it, is refused at submit, naming it.
TEST(Sweep, AKnobGoesToTheModelsThatTakeItAndOneNoneTakesIsRefused) {
  auto spec = minimal();
  spec["axes"]["model"] = {"mlp", "resnet18"};
  spec["fixed"]["width"] = 64;
  const auto sweep = expand(spec, "t.yaml");
  for (const auto& job : sweep.jobs) {
    EXPECT_EQ(job.document.contains("width"), job.document.at("model") == "mlp") << job.document.dump();
  }
  spec["fixed"]["heads"] = 4;
  try {
    expand(spec, "t.yaml");
    FAIL() << "heads accepted, which neither mlp nor resnet18 takes";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "fixed.heads");
    EXPECT_NE(std::string(error.what()).find("no model of the sweep takes it"), std::string::npos) << error.what();
  }
  spec["fixed"].erase("heads");
  spec["axes"]["depth"] = {1, 2};  // an axis is each configuration's own: resnet18 cannot take it
  try {
    expand(spec, "t.yaml");
    FAIL() << "depth accepted for resnet18";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("depth: model 'resnet18' does not take it"), std::string::npos)
        << error.what();
  }
  spec["axes"].erase("depth");
  spec["include"] = {{{"model", "hf:gpt2"}, {"batch_size", 8}, {"vocab", 1000}, {"dropout", "off"}}};
  EXPECT_NO_THROW(expand(spec, "t.yaml"));
  spec["include"] = {{{"model", "mlp"}, {"batch_size", 8}, {"dropout", "off"}}};
  EXPECT_THROW(expand(spec, "t.yaml"), InvalidInput);
}

TEST(Sweep, AUserModelNamedOutsideTheModelRootsIsRefusedNamingTheModel) {
  auto spec = minimal();
  spec["axes"]["model"] = {"python:team.nets:build", "torchscript:nets/resnet.pt"};
  EXPECT_EQ(expand(spec, "t.yaml").jobs.size(), 12u);
  for (const char* model : {"torchscript:../nets/resnet.pt", "torchscript:/etc/passwd", "torchscript:nets/../../x.pt",
                            "python:team/nets:build", "python:team.nets", "python:team.nets:build:again"}) {
    spec["axes"]["model"] = {model};
    try {
      expand(spec, "t.yaml");
      ADD_FAILURE() << model << " accepted";
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(model), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("expected "), std::string::npos) << error.what();
    }
  }
}

// The reason a sweep is refused for, or "<accepted>".
std::string refusal_text(const nlohmann::json& spec) {
  try {
    expand(spec, "t.yaml");
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "<accepted>";
}

TEST(Sweep, AGenerationThatDoesNotFitItsModelIsRefusedNamingTheField) {
  auto spec = parse_yaml(R"(
name: t
axes:
  model: [gpt]
  prompt_len: [8, 16]
  new_tokens: [8]
fixed: {task: generate, batch_size: 2, seq_len: 32, vocab: 256, width: 64, heads: 4, depth: 2}
)",
                         "t.yaml");
  EXPECT_EQ(expand(spec, "t.yaml").jobs.size(), 2u);
  const auto refused_for = [&](const char* field) {
    const auto text = refusal_text(spec);
    EXPECT_NE(text.find(std::string(field) + ": "), std::string::npos) << text;
  };
  spec["axes"]["prompt_len"] = {8, 30};  // 30 + 8 positions, the model learns 32
  refused_for("new_tokens");
  spec["axes"]["prompt_len"] = {8};
  spec["axes"]["model"] = {"resnet18"};  // no decoder
  refused_for("task");
  spec["axes"]["model"] = {"transformer"};  // an encoder
  refused_for("task");
  spec["axes"]["model"] = {"gpt"};
  spec["fixed"]["iters"] = 3;  // a generation's steps are new_tokens - 1
  refused_for("iters");
  spec["fixed"].erase("iters");
  // hf: positions the repository's configurations name: Llama 2 has 4096.
  spec["axes"]["model"] = {"hf:llama-2-7b"};
  spec["fixed"]["seq_len"] = 8192;
  refused_for("seq_len");
  spec["fixed"]["seq_len"] = 128;
  spec["axes"]["new_tokens"] = {4095};
  refused_for("new_tokens");
  spec["axes"]["new_tokens"] = {64};
  EXPECT_EQ(refusal_text(spec), "<accepted>");
  // A model type's own positions are its runner's to check, once built.
  spec["axes"]["model"] = {"hf:gpt2"};
  spec["axes"]["new_tokens"] = {100000};
  EXPECT_EQ(refusal_text(spec), "<accepted>");
}

TEST(Suites, ASuiteStandsForItsModelsWithItsSizesUnlessTheSweepSetsThem) {
  auto spec = parse_yaml(R"(
name: s
axes:
  model: [mlp, {suite: hf-cpu}, hf:gpt2]
  mode: [eager, compiled]
fixed: {runner: torch-compile, batch_size: 2, seq_len: 16}
)",
                         "s.yaml");
  const auto sweep = expand(spec, "s.yaml");
  EXPECT_EQ(sweep.spec.at("axes").at("model"),
            nlohmann::json::array({"mlp", "hf:gpt2", "hf:bert", "hf:llama", "hf:opt", "hf:distilbert"}));
  EXPECT_EQ(sweep.jobs.size(), 12u);
  EXPECT_EQ(sweep.spec.at("fixed").at("seq_len"), 16);  // the sweep's own wins
  EXPECT_EQ(sweep.spec.at("fixed").at("depth"), 2);     // the suite's
  // The fixed model may be a suite too: it becomes the model axis.
  spec["axes"].erase("model");
  spec["fixed"]["model"] = {{"suite", "timm-cpu"}};
  EXPECT_EQ(refusal(spec), "fixed.seq_len");  // no image model takes a sequence length
  spec["fixed"].erase("seq_len");
  const auto fixed = expand(spec, "s.yaml");
  EXPECT_EQ(fixed.spec.at("axes").at("model").size(), 5u);
  EXPECT_FALSE(fixed.spec.at("fixed").contains("model"));
  EXPECT_EQ(fixed.spec.at("fixed").at("input_size"), 64);
  const auto names = suite_names();
  for (const auto& name : {"torchvision", "timm", "hf", "torchvision-cpu", "timm-cpu", "hf-cpu"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(Suites, ASuiteThatDoesNotExistIsRefusedNamingThoseThatDo) {
  auto spec = minimal();
  spec["axes"]["model"] = {"mlp", {{"suite", "timm_cpu"}}};
  try {
    expand(spec, "t.yaml");
    FAIL() << "accepted";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "axes.model[1].suite");
    EXPECT_NE(std::string(error.what()).find("no suite 'timm_cpu'; closest: timm-cpu (suites: "), std::string::npos)
        << error.what();
  }
  spec["axes"].erase("model");
  spec["fixed"]["model"] = {{"suite", "hf"}};
  spec["axes"]["model"] = {"mlp"};
  EXPECT_EQ(refusal(spec), "fixed.model");  // fixed and an axis at once
}

TEST(Sweep, ExpandsTheCartesianProductWithFixedKnobs) {
  const auto sweep = expand(minimal(), "t.yaml");
  EXPECT_EQ(sweep.configurations, 12u);
  ASSERT_EQ(sweep.jobs.size(), 12u);
  std::set<std::string> keys;
  for (const auto& job : sweep.jobs) {
    keys.insert(job.config_key);
    EXPECT_EQ(job.document.at("epochs"), 2);
    EXPECT_EQ(job.document.at("sweep"), "t");
    EXPECT_EQ(job.document.at("schema_version"), 1);
  }
  EXPECT_EQ(keys.size(), 12u);
}

TEST(Sweep, ExcludeRemovesAndIncludeAdds) {
  auto spec = minimal();
  spec["exclude"] = {{{"model", "resnet18"}, {"mode", "compiled"}}};
  spec["include"] = {{{"model", "transformer"}, {"batch_size", 4}, {"mode", "compiled"}}};
  const auto sweep = expand(spec, "t.yaml");
  EXPECT_EQ(sweep.configurations, 12u - 3u + 1u);
  for (const auto& job : sweep.jobs) {
    EXPECT_FALSE(job.document["model"] == "resnet18" && job.document["mode"] == "compiled");
  }
}

TEST(Sweep, RepeatsAreInterleavedReproduciblyRoundByRound) {
  auto spec = minimal();
  spec["repeats"] = 3;
  const auto a = expand(spec, "t.yaml"), b = expand(spec, "t.yaml");
  ASSERT_EQ(a.jobs.size(), 36u);
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].config_key, b.jobs[i].config_key);
    EXPECT_EQ(a.jobs[i].ordinal, static_cast<int64_t>(i));
    EXPECT_EQ(a.jobs[i].repeat, static_cast<int64_t>(i / 12));  // round r holds every configuration once
  }
  spec["order"] = "grouped";
  const auto grouped = expand(spec, "t.yaml");
  bool differs = false;
  for (std::size_t i = 0; i < 12; ++i) differs |= grouped.jobs[i].config_key != a.jobs[i].config_key;
  EXPECT_TRUE(differs);
  spec["order"] = "interleaved";
  spec["seed"] = 7;
  const auto reseeded = expand(spec, "t.yaml");
  differs = false;
  for (std::size_t i = 0; i < 12; ++i) differs |= reseeded.jobs[i].config_key != a.jobs[i].config_key;
  EXPECT_TRUE(differs);
}

// pairing (docs/noise.md): a pair's configurations run next to each other,
// A B in even rounds and B A in odd ones; the pairs themselves are shuffled.
TEST(Sweep, APairsConfigurationsRunTogetherInAlternationRoundByRound) {
  auto spec = minimal();
  spec["repeats"] = 4;
  spec["pairing"] = {{"by", "mode"}};
  const auto sweep = expand(spec, "t.yaml");
  EXPECT_EQ(sweep.pair_axis, "mode");
  ASSERT_EQ(sweep.jobs.size(), 48u);
  std::set<std::string> pairs_of_round;
  for (std::size_t i = 0; i < sweep.jobs.size(); i += 2) {
    const auto& first = sweep.jobs[i];
    const auto& second = sweep.jobs[i + 1];
    EXPECT_EQ(pair_key(first.config_key, "mode"), pair_key(second.config_key, "mode")) << i;
    EXPECT_EQ(first.repeat, second.repeat);
    const bool even = first.repeat % 2 == 0;
    EXPECT_EQ(first.document.at("mode"), even ? "eager" : "compiled") << "round " << first.repeat;
    EXPECT_EQ(second.document.at("mode"), even ? "compiled" : "eager") << "round " << first.repeat;
    if (i % 12 == 0) pairs_of_round.clear();
    EXPECT_TRUE(pairs_of_round.insert(pair_key(first.config_key, "mode")).second) << "a pair twice in one round";
  }
  // Shuffled: the rounds do not all take the pairs in the same order.
  bool differs = false;
  for (std::size_t i = 0; i < 12; i += 2)
    differs |= pair_key(sweep.jobs[i].config_key, "mode") != pair_key(sweep.jobs[24 + i].config_key, "mode");
  EXPECT_TRUE(differs);
  spec["pairing"] = {{"by", "colour"}};
  EXPECT_EQ(refusal(spec), "pairing.by");
  spec["pairing"] = {{"by", "mode"}, {"on", "gpu"}};
  EXPECT_EQ(refusal(spec), "pairing.on");
}

// The key the coordinator stores as jobs.pair_key, in the text migration 19
// gives the jobs stored before it (tests/store/store_test.cpp).
TEST(Sweep, APairKeyIsTheConfigurationLessThePairedAxisAsCompactSortedJson) {
  EXPECT_EQ(pair_key(R"({"batch_size":8,"mode":"eager","model":"mlp"})", "mode"), R"({"batch_size":8,"model":"mlp"})");
  EXPECT_EQ(pair_key(R"({"batch_size":8,"mode":"eager","model":"mlp"})", "runner"),
            R"({"batch_size":8,"mode":"eager","model":"mlp"})");
  EXPECT_EQ(stored_pair_key(R"({"batch_size":8,"mode":"eager","model":"mlp"})", "mode"),
            R"({"batch_size":8,"model":"mlp"})");
  EXPECT_EQ(stored_pair_key(R"({"batch_size":8,"mode":"eager","model":"mlp"})", ""), "") << "an unpaired sweep";
}

// calibration: {rounds, nodes} (docs/noise.md): the rounds are the
// repeats, the sweep is tagged calibration, and repeats beside it is refused.
TEST(Sweep, ACalibrationBlockSetsTheRoundsTheNodesAndTheTag) {
  auto spec = minimal();
  spec["calibration"] = {{"rounds", 6}, {"nodes", 3}};
  const auto sweep = expand(spec, "t.yaml");
  EXPECT_EQ(sweep.repeats, 6);
  EXPECT_EQ(sweep.jobs.size(), 12u * 6);
  EXPECT_EQ(sweep.calibration_nodes, 3);
  EXPECT_EQ(sweep.tags, std::vector<std::string>{"calibration"});
  spec["calibration"].erase("nodes");
  EXPECT_EQ(expand(spec, "t.yaml").calibration_nodes, 1);
  EXPECT_EQ(expand(minimal(), "t.yaml").calibration_nodes, 0);
  spec["repeats"] = 3;
  EXPECT_EQ(refusal(spec), "calibration");
  spec.erase("repeats");
  spec["calibration"]["rounds"] = 1;
  EXPECT_EQ(refusal(spec), "calibration.rounds");
}

TEST(Sweep, ErrorsNameThePathInsideTheFile) {
  auto spec = minimal();
  spec["axes"]["batch_size"] = {8, 16, 0};
  EXPECT_EQ(refusal(spec), "axes.batch_size[2]");
  spec = minimal();
  spec["axes"]["precision"] = {"fp32", "fp8"};
  EXPECT_EQ(refusal(spec), "axes.precision[1]");
  spec = minimal();
  spec["axes"]["colour"] = {"red"};
  EXPECT_EQ(refusal(spec), "axes.colour[0]");
  spec = minimal();
  spec["fixed"]["warmup"] = -1;
  EXPECT_EQ(refusal(spec), "fixed.warmup");
  spec = minimal();
  spec["exclude"] = {{{"mode", "jit"}}};
  EXPECT_EQ(refusal(spec), "exclude[0].mode");
  spec = minimal();
  spec.erase("name");
  EXPECT_EQ(refusal(spec), "name");
  spec = minimal();
  spec["repeats"] = 0;
  EXPECT_EQ(refusal(spec), "repeats");
  spec = minimal();
  spec["axes"]["batch_size"] = nlohmann::json::array();
  EXPECT_EQ(refusal(spec), "axes.batch_size");
  spec = minimal();
  spec["fixed"]["resolved"] = true;  // the agent's resolution's (docs/worker.md)
  EXPECT_EQ(refusal(spec), "fixed.resolved");
}

TEST(Sweep, AdaptiveRepeatsStartWithMinRoundsAndNameTheirBadFields) {
  auto spec = minimal();
  spec["repeats"] = {{"min", 2}, {"max", 10}, {"until", {{"compare", "mode"}, {"ci_half_width", 0.02}}}};
  const auto sweep = expand(spec, "t.yaml");
  EXPECT_EQ(sweep.repeats, 2);
  EXPECT_EQ(sweep.jobs.size(), 12u * 2);
  spec["repeats"]["max"] = 1;
  EXPECT_EQ(refusal(spec), "repeats.max");
  spec["repeats"]["max"] = 10;
  spec["repeats"]["until"]["compare"] = "batch_size";  // three values: no pair
  EXPECT_EQ(refusal(spec), "repeats.until.compare");
  spec["repeats"]["until"]["compare"] = "colour";
  EXPECT_EQ(refusal(spec), "repeats.until.compare");
  spec["repeats"]["until"]["compare"] = "mode";
  spec["repeats"]["until"]["ci_half_width"] = 0;
  EXPECT_NE(refusal(spec), "<accepted>");
  // Until the rule has a power (docs/noise.md): the slowdown's default is the schema's, alpha and threshold the rule's.
  spec["repeats"]["until"] = {{"compare", "mode"}, {"power", 0.9}};
  const auto powered = expand(spec, "t.yaml");
  EXPECT_DOUBLE_EQ(powered.adaptive->power.value_or(0), 0.9);
  EXPECT_DOUBLE_EQ(powered.adaptive->slowdown, 0.1);
  EXPECT_DOUBLE_EQ(powered.adaptive->judge.alpha, RegressionRule{}.alpha);
  EXPECT_FALSE(powered.adaptive->ci_half_width);
  spec["repeats"]["until"]["threshold"] = 0.08;
  EXPECT_DOUBLE_EQ(expand(spec, "t.yaml").adaptive->judge.threshold, 0.08);
  spec["repeats"]["until"]["ci_half_width"] = 0.02;  // one of the two, not both
  EXPECT_NE(refusal(spec), "<accepted>");
  spec["repeats"]["until"] = {{"compare", "mode"}, {"power", 1.5}};
  EXPECT_NE(refusal(spec), "<accepted>");
}

TEST(Sweep, TextThatIsNotUtf8IsRefusedWithItsOffset) {
  // Found by fuzz_sweep: a key with invalid UTF-8 used to escape as an internal error.
  for (const std::string text :
       {"name: s\naxes: {batch\x86: [1]}\n", "name: \xc0\xaf\n", "name: \xed\xa0\x80\n", "name: \xf0\x9f\x98\n"}) {
    try {
      ts::sweep::parse_yaml(text, "t.yaml");
      ADD_FAILURE() << "accepted " << ::testing::PrintToString(text);
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find("t.yaml: not valid UTF-8 at byte"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(ts::sweep::parse_yaml("name: caf\xc3\xa9 \xf0\x9f\x98\x80\n", "t.yaml").at("name"),
            "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

TEST(Sweep, ControlCharactersYamlForbidsAreRefusedWithTheirOffset) {
  // Found by fuzz_sweep (CI of 797e02a): a NUL byte inside a key came out of
  // yaml-cpp as invalid UTF-8, and dumping the configuration for an error
  // message then threw nlohmann's type_error 316 past every handler.
  using namespace std::string_literals;
  const auto crash =
      "name: s\naxes: {batch_size: [8]}\nfixed: {model: mlp}\ninclude: [{ordebat\x1d\x00_size' \x01\t4}]\n"s;
  for (const std::string& text : {crash, "name: a\0b\n"s, "name: a\x7f\n"s, "name: \xc2\x9b\n"s}) {
    try {
      ts::sweep::parse_yaml(text, "t.yaml");
      ADD_FAILURE() << "accepted " << ::testing::PrintToString(text);
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find("t.yaml: a control character YAML does not allow"), std::string::npos)
          << error.what();
    }
  }
  // Tab, line feed, carriage return and U+0085 are YAML's allowed ones.
  EXPECT_EQ(ts::sweep::parse_yaml("name: \"a\tb\"\r\nrepeats: 2\n", "t.yaml").at("name"), "a\tb");
}

TEST(Sweep, ConfigurationsMissingARequiredFieldAreRefused) {
  auto spec = minimal();
  spec["axes"].erase("batch_size");
  EXPECT_EQ(refusal(spec), "axes");
}

TEST(Sweep, ParseFillsEverySettingFromTheSchemasDefaults) {
  const auto sweep = parse(minimal(), "t.yaml");
  EXPECT_EQ(sweep.name, "t");
  EXPECT_TRUE(sweep.tags.empty());
  EXPECT_EQ(sweep.repeats, 1);
  EXPECT_FALSE(sweep.adaptive);
  EXPECT_EQ(sweep.priority, 0);
  EXPECT_EQ(sweep.max_attempts, 3);
  EXPECT_TRUE(sweep.node_exclusive);
  EXPECT_FALSE(sweep.pinned);
  EXPECT_TRUE(sweep.interleaved);
  EXPECT_EQ(sweep.seed, 0u);
  EXPECT_EQ(sweep.requirements.gpu_type, "");
  EXPECT_EQ(sweep.requirements.min_gpu_memory_gb, 0.0);
  EXPECT_TRUE(sweep.requirements.labels.empty());
  EXPECT_TRUE(sweep.jobs.empty());  // parse reads the settings; expand makes the jobs
}

TEST(Sweep, ParseReadsWhatTheFileSays) {
  auto spec = minimal();
  spec.update({{"priority", 5},
               {"max_attempts", 1},
               {"node_exclusive", false},
               {"placement", "pinned"},
               {"order", "grouped"},
               {"seed", 7},
               {"tags", {"nightly"}},
               {"requirements", {{"gpu_type", "H100"}, {"labels", {{"rack", "b"}}}}},
               {"repeats", {{"max", 9}, {"until", {{"compare", "mode"}, {"ci_half_width", 0.05}}}}}});
  const auto sweep = parse(spec, "t.yaml");
  EXPECT_EQ(sweep.priority, 5);
  EXPECT_EQ(sweep.max_attempts, 1);
  EXPECT_FALSE(sweep.node_exclusive);
  EXPECT_TRUE(sweep.pinned);
  EXPECT_FALSE(sweep.interleaved);
  EXPECT_EQ(sweep.seed, 7u);
  EXPECT_EQ(sweep.tags, std::vector<std::string>{"nightly"});
  EXPECT_EQ(sweep.requirements.gpu_type, "H100");
  EXPECT_EQ(sweep.requirements.min_gpu_memory_gb, 0.0);
  EXPECT_EQ(sweep.requirements.labels.at("rack"), "b");
  ASSERT_TRUE(sweep.adaptive);
  EXPECT_EQ(sweep.adaptive->min, 3);  // the schema's default
  EXPECT_EQ(sweep.repeats, 3);
  EXPECT_EQ(sweep.adaptive->max, 9);
  EXPECT_EQ(sweep.adaptive->compare, "mode");
  EXPECT_EQ(sweep.adaptive->values, (std::vector<nlohmann::json>{"eager", "compiled"}));
  EXPECT_DOUBLE_EQ(sweep.adaptive->ci_half_width.value_or(0), 0.05);
  EXPECT_FALSE(sweep.adaptive->power);
}

TEST(Yaml, PlainScalarsAreTypedAndQuotedOnesStayStrings) {
  const auto document = parse_yaml("a: 64\nb: '64'\nc: 1.5e-3\nd: true\ne: ~\nf: [x, 2]\n", "y");
  EXPECT_EQ(document["a"], 64);
  EXPECT_EQ(document["b"], "64");
  EXPECT_DOUBLE_EQ(document["c"].get<double>(), 1.5e-3);
  EXPECT_EQ(document["d"], true);
  EXPECT_TRUE(document["e"].is_null());
  EXPECT_EQ(document["f"], (nlohmann::json{"x", 2}));
}

TEST(Yaml, SyntaxErrorsGiveTheLine) {
  try {
    parse_yaml("name: t\naxes: [\n", "bad.yaml");
    FAIL();
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("bad.yaml: "), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("line "), std::string::npos);
  }
}

TEST(Examples, EveryExampleSweepExpands) {
  std::size_t examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TS_SOURCE_DIR "/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_FALSE(load(entry.path().string()).jobs.empty()) << entry.path();
    ++examples;
  }
  EXPECT_GE(examples, 7u);
  const auto frameworks = load(TS_SOURCE_DIR "/examples/gpu-frameworks.yaml");
  EXPECT_EQ(frameworks.configurations, 24u);
  EXPECT_EQ(frameworks.jobs.front().document.at("device"), "cuda");
  const auto quick = load(TS_SOURCE_DIR "/examples/cpu-quick.yaml");
  EXPECT_EQ(quick.configurations, 6u);
  EXPECT_EQ(quick.jobs.size(), 12u);
  const auto reference = load(TS_SOURCE_DIR "/examples/gpu-resnet50-reference.yaml");
  EXPECT_EQ(reference.configurations, 18u);
  EXPECT_EQ(reference.jobs.size(), 54u);
  EXPECT_EQ(reference.jobs.front().document.at("device"), "cuda");
}

}  // namespace
}  // namespace ts::sweep
