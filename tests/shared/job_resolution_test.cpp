// A job resolved once, as the agent resolves it before its runner sees it.
#include "shared/job_resolution.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"

namespace ts::job_resolution {
namespace {

nlohmann::json job(nlohmann::json fields) {
  nlohmann::json document{{"schema_version", 1}, {"model", "mlp"}, {"batch_size", 100}};
  if (!fields.is_null()) document.update(fields);  // {} arrives as null
  return document;
}

std::string refused_field(const nlohmann::json& document, const Node& node = {"libtorch", 8}) {
  try {
    resolve(document, node);
  } catch (const InvalidInput& error) {
    return error.field();
  }
  return "accepted";
}

TEST(JobResolution, FillsEveryDefaultTheRunnerAndTheModelsKnobs) {
  const auto resolved = resolve(job({}), {"torch-compile", 8});
  EXPECT_EQ(resolved.at("resolved"), true);
  EXPECT_EQ(resolved.at("runner"), "torch-compile");
  EXPECT_EQ(resolved.at("epochs"), 5);
  EXPECT_EQ(resolved.at("precision"), "fp32");
  EXPECT_EQ(resolved.at("width"), 1024);            // mlp's, from schemas/models.json
  EXPECT_FALSE(resolved.contains("heads"));         // no knob mlp does not read
  EXPECT_FALSE(resolved.contains("prompt_len"));    // generate's alone
  EXPECT_FALSE(resolved.contains("dataset_size"));  // resolved into iters
  // Resolving again changes nothing: an agent's job comes resolved.
  EXPECT_EQ(resolve(resolved, {"libtorch", 2}), resolved);
}

TEST(JobResolution, TheIterationsOfAnEpoch) {
  EXPECT_EQ(resolve(job({}), {"libtorch", 1}).at("iters"), 50000 / 100);
  EXPECT_EQ(resolve(job({{"dataset_size", 1050}}), {"libtorch", 1}).at("iters"), 10);           // what the runner runs
  EXPECT_EQ(resolve(job({{"dataset_size", 1050}}), {"libtorch", 1}).at("dataset_size"), 1050);  // given: kept
  EXPECT_EQ(resolve(job({{"dataset_size", 10}}), {"libtorch", 1}).at("iters"), 1);
  EXPECT_EQ(resolve(job({{"iters", 7}}), {"libtorch", 1}).at("iters"), 7);
  const auto generation =
      resolve(job({{"model", "gpt"}, {"task", "generate"}, {"new_tokens", 9}, {"prompt_len", 4}}), {"libtorch", 1});
  EXPECT_EQ(generation.at("iters"), 8);  // the decode steps
  EXPECT_EQ(generation.at("prompt_len"), 4);
  EXPECT_EQ(iterations(job({{"dataset_size", 1050}})), 10);  // an unresolved job counts the same
}

TEST(JobResolution, ThreadsZeroIsTheNodesCoresSharedByTheJobsRanksThere) {
  EXPECT_EQ(resolve(job({}), {"libtorch", 8}).at("threads"), 8);
  EXPECT_EQ(resolve(job({{"threads", 3}}), {"libtorch", 8}).at("threads"), 3);
  EXPECT_EQ(resolve(job({{"gpus", 4}}), {"libtorch", 8}).at("threads"), 2);
  EXPECT_EQ(resolve(job({{"gpus", 4}, {"hosts", {"a", "b"}}}), {"libtorch", 8}).at("threads"), 4);
  EXPECT_EQ(resolve(job({{"gpus", 16}}), {"libtorch", 8}).at("threads"), 1);
}

// #49: a knob the model cannot take was dropped with a warning (GPT-2's
// vocabulary stayed 50,257 whatever the job said); now refused, naming it.
TEST(JobResolution, AKnobTheModelDoesNotTakeIsRefusedNamingIt) {
  EXPECT_EQ(refused_field(job({{"heads", 4}, {"width", 64}})), "heads");
  EXPECT_EQ(refused_field(job({{"model", "resnet18"}, {"dropout", "off"}})), "dropout");
  EXPECT_EQ(resolve(job({{"width", 64}}), {"libtorch", 1}).at("width"), 64);
  const auto hf = resolve(job({{"model", "hf:gpt2"}, {"vocab", 1000}, {"dropout", "off"}}), {"torch-compile", 1});
  EXPECT_EQ(hf.at("vocab"), 1000);
  EXPECT_EQ(hf.at("dropout"), "off");
  try {
    resolve(job({{"model", "resnet18"}, {"width", 64}}), {"libtorch", 1});
    FAIL() << "resnet18 took a width";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("model 'resnet18' does not take it (its knobs: input_size, num_classes)"),
              std::string::npos)
        << error.what();
  }
}

TEST(JobResolution, WhatTheModelOrRunnerCannotRunIsRefusedNamingTheField) {
  EXPECT_EQ(refused_field(job({{"model", "transformer"}, {"width", 64}, {"heads", 5}})), "heads");
  EXPECT_EQ(refused_field(job({{"model", "gpt"}, {"width", 64}})), "heads");  // gpt's 12 heads
  EXPECT_EQ(refused_field(job({{"model", "gpt"}, {"task", "generate"}, {"iters", 3}})), "iters");
  EXPECT_EQ(refused_field(job({{"task", "generate"}})), "task");  // mlp generates nothing
  EXPECT_EQ(refused_field(job({{"memory_format", "channels_last"}})), "memory_format");
  EXPECT_EQ(refused_field(job({{"model", "timm:resnet18"}}), {"libtorch", 1}), "model");
  EXPECT_EQ(refused_field(job({{"model", "timm:resnet18"}}), {"torch-compile", 1}), "accepted");
  EXPECT_EQ(refused_field(job({{"model", "vgg16"}})), "model");
  EXPECT_EQ(refused_field(job({{"threads", -1}})), "threads");  // the schema's
}

}  // namespace
}  // namespace ts::job_resolution
