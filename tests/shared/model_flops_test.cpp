// The analytic FLOP counter against published figures; runners/
// torch_compile_runner_test.py holds it against torch.utils.flop_counter.
#include <gtest/gtest.h>

#include "shared/errors.hpp"
#include "shared/models/catalogue.hpp"
#include "shared/models/flops.hpp"

namespace ts::models {
namespace {

TEST(ModelFlops, ResNetsAt224PixelsMatchTorchvisionsPublishedMultiplyAdds) {
  // torchvision's model cards: 1.81 and 4.09 GFLOPS, counted as multiply-adds.
  EXPECT_NEAR(forward_flops_per_sample({{"model", "resnet18"}}) / 2e9, 1.814, 0.001);
  EXPECT_NEAR(forward_flops_per_sample({{"model", "resnet50"}}) / 2e9, 4.089, 0.001);
}

TEST(ModelFlops, AStepIsTheWholeJobsSamplesAndTrainingCountsThreeForwards) {
  // 2 x (16 x 32 + 32 x 32 + 32 x 10) per sample.
  const nlohmann::json mlp{{"model", "mlp"}, {"input_size", 16},  {"width", 32},
                           {"depth", 2},     {"num_classes", 10}, {"batch_size", 8}};
  EXPECT_EQ(forward_flops_per_sample(mlp), 2.0 * (16 * 32 + 32 * 32 + 32 * 10));
  EXPECT_EQ(step_flops(mlp).per_step, forward_flops_per_sample(mlp) * 8 * 3);
  auto inference = mlp;
  inference["task"] = "infer";
  inference["gpus"] = 4;
  EXPECT_EQ(step_flops(inference).per_step, forward_flops_per_sample(mlp) * 8 * 4);
}

TEST(ModelFlops, KnobsTheJobLeavesOutTakeTheCataloguesDefaults) {
  const auto knobs = knobs_of({{"model", "transformer"}, {"width", 64}});
  EXPECT_EQ(knobs.at("width"), 64);
  EXPECT_EQ(knobs.at("seq_len"), find("transformer").defaults.at("seq_len"));
  EXPECT_FALSE(knobs.contains("input_size"));  // not a transformer knob
}

TEST(ModelFlops, EveryCatalogueModelHasAFormulaAndUnknownModelsAreNamed) {
  for (const auto& spec : catalogue()) {
    EXPECT_GT(forward_flops_per_sample({{"model", spec.name}}), 0) << spec.name;
  }
  try {
    forward_flops_per_sample({{"model", "vgg16"}});
    FAIL() << "no error";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.field(), "model");
    EXPECT_NE(std::string(error.what()).find("known models: gpt, mlp, resnet18"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace ts::models
