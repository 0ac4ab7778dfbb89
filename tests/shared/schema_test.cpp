#include "shared/schema.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"

namespace ts::schema {
namespace {

nlohmann::json minimal_job() { return {{"schema_version", 1}, {"model", "mlp"}, {"batch_size", 8}}; }

std::string failing_field(const Validator& validator, const nlohmann::json& document) {
  try {
    validator.validate(document);
  } catch (const InvalidInput& error) {
    return error.field();
  }
  return "<valid>";
}

TEST(Schema, EveryContractFileIsEmbedded) {
  EXPECT_NO_THROW(text("job.schema.json"));
  EXPECT_NO_THROW(text("result.schema.json"));
  EXPECT_THROW(text("nope.schema.json"), std::out_of_range);
}

TEST(Schema, AcceptsAMinimalJob) {
  const Validator job("job.schema.json");
  EXPECT_TRUE(job.problems(minimal_job()).empty());
}

TEST(Schema, NamesAMissingRequiredField) {
  const Validator job("job.schema.json");
  auto document = minimal_job();
  document.erase("batch_size");
  EXPECT_EQ(failing_field(job, document), "batch_size");
}

TEST(Schema, NamesAnUnknownField) {
  const Validator job("job.schema.json");
  auto document = minimal_job();
  document["batch_sise"] = 8;
  EXPECT_EQ(failing_field(job, document), "batch_sise");
}

TEST(Schema, NamesANestedFieldWithItsPath) {
  const Validator job("job.schema.json");
  auto document = minimal_job();
  document["labels"] = {{"owner", 7}};
  EXPECT_EQ(failing_field(job, document), "labels.owner");
}

TEST(Schema, RejectsWrongTypesAndRanges) {
  const Validator job("job.schema.json");
  auto document = minimal_job();
  document["batch_size"] = 0;
  EXPECT_EQ(failing_field(job, document), "batch_size");
  document["batch_size"] = "8";
  EXPECT_EQ(failing_field(job, document), "batch_size");
  document = minimal_job();
  document["precision"] = "fp8";
  EXPECT_EQ(failing_field(job, document), "precision");
  document = minimal_job();
  document["device"] = "tpu";
  EXPECT_EQ(failing_field(job, document), "device");
}

TEST(Schema, ResultSchemaResolvesItsReferenceToTheJobSchema) {
  const Validator result("result.schema.json");
  nlohmann::json document{{"schema_version", 1},
                          {"status", "failed"},
                          {"error", "boom"},
                          {"runner", {{"name", "libtorch"}, {"version", "0"}}},
                          {"job", minimal_job()},
                          {"context", nlohmann::json::object()},
                          {"warnings", nlohmann::json::array()},
                          {"started_at", "t"},
                          {"finished_at", "t"}};
  // The context lacks its required fields: reported inside "context".
  EXPECT_EQ(failing_field(result, document).rfind("context", 0), 0u);
  document["context"] = {
      {"hostname", "h"},       {"cpu_model", "c"},     {"cpu_cores_available", 2},      {"torch_version", "2.6.0"},
      {"intra_op_threads", 2}, {"interop_threads", 2}, {"torchsweep_version", "0.1.0"}, {"torchsweep_commit", "abc"},
      {"gpu_count", 0}};
  EXPECT_TRUE(result.problems(document).empty());
  // The referenced job schema applies inside the result.
  document["job"]["precision"] = "fp8";
  EXPECT_EQ(failing_field(result, document), "job.precision");
  // An ok result must carry its measurements.
  document["job"] = minimal_job();
  document["status"] = "ok";
  EXPECT_NE(failing_field(result, document), "<valid>");
}

}  // namespace
}  // namespace ts::schema
