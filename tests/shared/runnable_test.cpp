// Whether the agents can run a sweep (shared/sweep/runnable.hpp): the
// runners, environments, models, libraries, modes and precisions they
// report, checked at submit.
#include "shared/sweep/runnable.hpp"

#include <gtest/gtest.h>

#include <set>

#include "shared/errors.hpp"
#include "shared/model_lists.hpp"
#include "shared/sweep/sweep.hpp"
#include "tests/shared/sweep_documents.hpp"

namespace ts::sweep {
namespace {

using testing::minimal;
using testing::refusal;

TEST(Runnable, AModelNoRunnerOfItsNameRunsIsRefusedByNameAndUnknownRunnersWarn) {
  auto spec = minimal();
  spec["axes"]["model"] = {"mlp", "nosuch"};
  const auto sweep = expand(spec, "t.yaml");
  const auto known =
      known_runners({{{"runners", {"libtorch", "fake"}}, {"models", {{"libtorch", {"mlp", "resnet18"}}}}},
                     {{"runners", {"libtorch"}}, {"models", {{"libtorch", {"transformer"}}}}}});
  EXPECT_EQ(known.runners.at("libtorch").at("model"), (std::set<std::string>{"mlp", "resnet18", "transformer"}));
  EXPECT_TRUE(known.runners.at("fake").empty());  // listed nothing: unchecked
  try {
    check_runnable(sweep, known, "as reported");
    FAIL() << "accepted";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "model");
    EXPECT_NE(std::string(error.what()).find("'nosuch'"), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).find("closest"), std::string::npos) << error.what();  // nothing near
    EXPECT_NE(std::string(error.what()).find("mlp, resnet18, transformer"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(check_runnable(expand(minimal(), "t.yaml"), known, "as reported").empty());
  spec["axes"]["model"] = {"resnet81"};
  try {
    check_runnable(expand(spec, "t.yaml"), known, "as reported");
    FAIL() << "accepted";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("'resnet81'; closest: resnet18 (it runs"), std::string::npos)
        << error.what();
  }
  spec["axes"]["model"] = {"mlp", "nosuch"};
  spec["fixed"]["runner"] = "jax";
  const auto warnings = check_runnable(expand(spec, "t.yaml"), known, "as reported");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("'jax'"), std::string::npos) << warnings[0];
  spec["fixed"]["runner"] = "fake";
  EXPECT_TRUE(check_runnable(expand(spec, "t.yaml"), known, "as reported").empty());
}

TEST(Runnable, ListsByDigestAreReadFromTheStoresListsAndAMissingOneChecksNothing) {
  // Agents of one image send the same digests (shared/model_lists.hpp); an old agent sends names inline.
  const nlohmann::json own = {"mlp", "resnet18"}, timm = {"timm:resnet50", "timm:vit_tiny"};
  auto by_digest = nlohmann::json::parse(R"({"runners": ["libtorch", "torch-compile"],
      "environments": {"system": {"python": "python3", "runners": {"torch-compile": {"torch": "2.6.0"}}}}})");
  by_digest["models"]["libtorch"] = own;
  by_digest["environments"]["system"]["models"]["torch-compile"] = timm;
  const auto inline_names = by_digest;
  const auto lists = model_lists::replace_by_digests(by_digest);
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(by_digest["models"]["libtorch"], model_lists::digest_of(own));
  EXPECT_TRUE(model_lists::is_digest(by_digest["environments"]["system"]["models"]["torch-compile"]));
  ModelLists store;
  for (const auto& [digest, names] : lists) store[digest] = names.get<std::vector<std::string>>();

  const auto from_digests = known_runners({by_digest, by_digest}, store);
  const auto from_names = known_runners({inline_names});
  EXPECT_EQ(from_digests.runners, from_names.runners);
  EXPECT_EQ(from_digests.environments, from_names.environments);
  EXPECT_EQ(from_digests.runners.at("libtorch").at("model"), (std::set<std::string>{"mlp", "resnet18"}));
  EXPECT_EQ(from_digests.environments.at("system").at("torch-compile"),
            (std::set<std::string>{"timm:resnet50", "timm:vit_tiny"}));
  // A digest whose list is not at hand checks nothing rather than refusing every model.
  const auto unknown = known_runners({by_digest}, {});
  EXPECT_FALSE(unknown.runners.at("libtorch").contains("model"));
  EXPECT_TRUE(unknown.environments.at("system").at("torch-compile").empty());
  auto spec = minimal();
  spec["axes"]["model"] = {"anything"};
  EXPECT_TRUE(check_runnable(expand(spec, "t.yaml"), unknown, "as reported").empty());
  EXPECT_THROW(check_runnable(expand(spec, "t.yaml"), from_digests, "as reported"), InvalidInput);
}

TEST(Runnable, AnEnvNoAgentOffersForItsRunnerIsRefusedNamingThoseOffered) {
  const auto known = known_runners({nlohmann::json::parse(R"({
      "runners": ["torch-compile", "tensorflow"],
      "environments": {
        "system": {"python": "python3", "runners": {"torch-compile": {"torch": "2.6.0"}}},
        "torch-2.15": {"python": "/v/bin/python3", "runners": {"torch-compile": {"torch": "2.15.0"}}},
        "tensorflow": {"python": "/t/bin/python3", "runners": {"tensorflow": {"tensorflow": "2.21.0"}}}}})")});
  auto spec = minimal();
  spec["fixed"]["runner"] = "torch-compile";
  spec["axes"]["env"] = {"system", "torch-2.15"};
  EXPECT_TRUE(check_runnable(expand(spec, "t.yaml"), known, "as reported").empty());
  const auto refusal = [&](const nlohmann::json& sweep_spec) {
    try {
      check_runnable(expand(sweep_spec, "t.yaml"), known, "as reported");
      return std::string("<accepted>");
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), "env");
      return std::string(error.what());
    }
  };
  spec["axes"]["env"] = {"system", "torch-2.16"};
  EXPECT_NE(refusal(spec).find("no agent offers environment 'torch-2.16' (offered: system, tensorflow, torch-2.15"),
            std::string::npos)
      << refusal(spec);
  spec["axes"]["env"] = {"tensorflow"};
  EXPECT_NE(refusal(spec).find("runner 'torch-compile' does not run in environment 'tensorflow' (there: tensorflow"),
            std::string::npos)
      << refusal(spec);
  // No agent said which environments it offers: unchecked, with a warning.
  const auto warnings =
      check_runnable(expand(spec, "t.yaml"), known_runners({{{"runners", {"torch-compile"}}}}), "as reported");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("env is unchecked"), std::string::npos) << warnings[0];
}

TEST(Runnable, ALibraryNameIsCheckedAgainstTheListOfTheJobsEnvironment) {
  // timm in torch-2.15 only; the system's torchvision older than torch-2.15's.
  const auto known = known_runners({nlohmann::json::parse(R"({
      "runners": ["torch-compile"],
      "models": {"torch-compile": ["mlp", "torchvision:resnet18", "torchscript:*"]},
      "environments": {
        "system": {"python": "python3", "runners": {"torch-compile": {"torch": "2.6.0"}},
                   "models": {"torch-compile": ["mlp", "torchvision:resnet18", "torchscript:*"]}},
        "torch-2.15": {"python": "/v/bin/python3", "runners": {"torch-compile": {"torch": "2.15.0"}},
                       "models": {"torch-compile": ["mlp", "torchvision:resnet18", "torchvision:vit_h_14",
                                                    "timm:resnet18", "timm:resnet50", "timm:resnet152",
                                                    "torchscript:*"]}}}})")});
  auto spec = minimal();
  spec["fixed"]["runner"] = "torch-compile";
  const auto refusal = [&](const nlohmann::json& models, const nlohmann::json& env) {
    spec["axes"]["model"] = models;
    spec["fixed"]["env"] = env;
    try {
      check_runnable(expand(spec, "t.yaml"), known, "as reported");
      return std::string("<accepted>");
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), "model");
      return std::string(error.what());
    }
  };
  EXPECT_EQ(refusal({"timm:resnet50", "torchvision:vit_h_14", "torchscript:mine.pt"}, "torch-2.15"), "<accepted>");
  EXPECT_EQ(refusal({"torchvision:resnet18", "torchscript:mine.pt"}, "system"), "<accepted>");
  EXPECT_EQ(refusal({"torchvision:resnet18"}, nullptr), "<accepted>");
  // In the library, but not in the environment's version of it: the environments that have it.
  EXPECT_NE(refusal({"timm:resnet50"}, "system")
                .find("runner 'torch-compile' has no model 'timm:resnet50' in environment 'system' (the library is "
                      "not installed there, or its version lacks the name); environments that have it: torch-2.15"),
            std::string::npos)
      << refusal({"timm:resnet50"}, "system");
  EXPECT_NE(refusal({"torchvision:vit_h_14"}, nullptr).find("in its own environment"), std::string::npos)
      << refusal({"torchvision:vit_h_14"}, nullptr);
  // In no environment: the closest names of the job's environment.
  EXPECT_NE(refusal({"timm:resnet5O"}, "torch-2.15")
                .find("no runner 'torch-compile' can run model 'timm:resnet5O' in environment 'torch-2.15'; closest: "
                      "timm:resnet50"),
            std::string::npos)
      << refusal({"timm:resnet5O"}, "torch-2.15");
}

TEST(Runnable, ALibraryModelRunsWhereTheRunnerListsItsLibrary) {
  const auto known = known_runners({nlohmann::json::parse(R"({
      "runners": ["libtorch", "torch-compile"],
      "models": {"libtorch": ["mlp", "resnet18"], "torch-compile": ["mlp", "resnet18", "timm:*", "torchvision:*"]}})")});
  auto spec = minimal();
  spec["axes"]["model"] = {"timm:test_resnet", "torchvision:squeezenet1_1"};
  spec["fixed"]["runner"] = "torch-compile";
  spec["fixed"]["data"] = {{"folder", "imagenet"}, {"format", "imagefolder"}};  // their inputs are images
  EXPECT_TRUE(check_runnable(expand(spec, "t.yaml"), known, "as reported").empty());
  spec["fixed"]["runner"] = "libtorch";
  try {
    check_runnable(expand(spec, "t.yaml"), known, "as reported");
    FAIL() << "a library model accepted for libtorch";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "model");
    EXPECT_NE(std::string(error.what()).find("'timm:test_resnet'"), std::string::npos) << error.what();
  }
  spec["axes"]["model"] = {"keras:resnet"};  // not a library of model_libraries.json
  EXPECT_EQ(refusal(spec), "axes");
}

TEST(Runnable, AModeOrPrecisionNoRunnerOfItsNameRunsIsRefusedNamingTheField) {
  const auto known =
      known_runners({{{"runners", {"libtorch", "tensorflow"}},
                      {"modes", {{"libtorch", {"eager", "compiled"}}, {"tensorflow", {"eager", "graph", "compiled"}}}},
                      {"precisions", {{"tensorflow", {"fp32", "bf16"}}}},
                      {"tasks", {{"libtorch", {"train", "infer", "generate"}}, {"tensorflow", {"train", "infer"}}}}}});
  auto spec = minimal();
  spec["axes"]["mode"] = {"eager", "graph"};
  auto refused_field = [&](const nlohmann::json& sweep_spec) {
    try {
      check_runnable(expand(sweep_spec, "t.yaml"), known, "as reported");
      return std::string("<accepted>");
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find("'libtorch'"), std::string::npos) << error.what();
      return error.field();
    }
  };
  EXPECT_EQ(refused_field(spec), "mode");  // graph is the tensorflow runner's
  spec["fixed"]["runner"] = "tensorflow";
  EXPECT_EQ(check_runnable(expand(spec, "t.yaml"), known, "as reported").size(), 0u);
  spec["fixed"]["precision"] = "fp16";
  try {
    check_runnable(expand(spec, "t.yaml"), known, "as reported");
    FAIL() << "fp16 accepted for tensorflow";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "precision");
    EXPECT_NE(std::string(error.what()).find("bf16, fp32"), std::string::npos) << error.what();
  }
  spec["fixed"]["runner"] = "libtorch";  // said nothing of precisions: unchecked
  spec["axes"]["mode"] = {"compiled"};
  EXPECT_EQ(refused_field(spec), "<accepted>");
  // A generation, which only the runners that say so run.
  spec["axes"] = {{"model", {"gpt"}}, {"mode", {"eager"}}};
  spec["fixed"] = {{"task", "generate"}, {"batch_size", 2}, {"seq_len", 128}, {"precision", "fp32"}};
  EXPECT_EQ(refused_field(spec), "<accepted>");
  spec["fixed"]["runner"] = "tensorflow";
  try {
    check_runnable(expand(spec, "t.yaml"), known, "as reported");
    FAIL() << "generate accepted for tensorflow";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "task");
    EXPECT_NE(std::string(error.what()).find("infer, train"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace ts::sweep
