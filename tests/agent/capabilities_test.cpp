// What an agent reports of its node: GPU identity (the GPUs it reports are
// the ones its jobs get) and its runners with their frameworks.
#include "agent/node/capabilities.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "shared/errors.hpp"
#include "shared/json_io.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::agent {
namespace {

TEST(Capabilities, JobsGetTheirGpusByTheUuidsTheAgentReported) {
  const auto gpus = parse_nvidia_smi(
      "0, NVIDIA A100-SXM4-80GB, 81920, GPU-aaaa\n"
      "1, NVIDIA H100 80GB HBM3, 81559, GPU-bbbb\n"
      "2, NVIDIA H100 80GB HBM3, 81559\n");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[1].at("uuid"), "GPU-bbbb");
  EXPECT_EQ(visible_devices(gpus, {1, 0}), "GPU-bbbb,GPU-aaaa");
  EXPECT_EQ(visible_devices(gpus, {2}), "2");  // no UUID: the index, in PCI bus order
  EXPECT_THROW(visible_devices(gpus, {7}), InvalidInput);
}

TEST(Capabilities, AnAllocationsCudaVisibleDevicesLimitsTheGpusOffered) {
  const auto gpus = parse_nvidia_smi(
      "0, NVIDIA H100 80GB HBM3, 81559, GPU-aaaa\n"
      "1, NVIDIA H100 80GB HBM3, 81559, GPU-bbbb\n"
      "2, NVIDIA H100 80GB HBM3, 81559, GPU-cccc\n"
      "3, NVIDIA H100 80GB HBM3, 81559, GPU-dddd\n");
  EXPECT_EQ(allocated_gpus(gpus, nullptr).size(), 4u);  // no allocation: every GPU
  const auto by_index = allocated_gpus(gpus, "1,3");    // what Slurm sets for --gres=gpu:2
  ASSERT_EQ(by_index.size(), 2u);
  EXPECT_EQ(by_index[0].at("index"), 1);
  EXPECT_EQ(by_index[1].at("index"), 3);
  EXPECT_EQ(allocated_gpus(gpus, "GPU-cccc").at(0).at("index"), 2);
  EXPECT_TRUE(allocated_gpus(gpus, "").empty());  // set but empty: no GPU at all, as CUDA reads it
  EXPECT_EQ(visible_devices(by_index, {3}), "GPU-dddd");
}

TEST(Capabilities, EachRunnersVersionLineBecomesItsFrameworks) {
  EXPECT_EQ(parse_runner_versions("torchsweep-worker 0.1.0 (abc)\ntorch 2.6.0 cuda none\n"),
            (nlohmann::json{{"torch", "2.6.0"}, {"cuda", nullptr}}));
  EXPECT_EQ(parse_runner_versions("torchsweep-jax 0.1.0 (abc)\njax 0.10.2 jaxlib 0.10.2 keras 3.15.1\n").size(), 3u);
  EXPECT_TRUE(parse_runner_versions("").empty());
}

TEST(Capabilities, TheModesAndPrecisionsARunnerSaysItRunsAreKeptByName) {
  const auto axes = parse_runner_axes(
      "torchsweep-tensorflow 0.1.0 (abc)\ntensorflow 2.21.0 keras 3.15.1\nmodes eager graph compiled\n"
      "precisions fp32 bf16\n");
  EXPECT_EQ(axes.at("modes"), (std::vector<std::string>{"eager", "graph", "compiled"}));
  EXPECT_EQ(axes.at("precisions"), (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_TRUE(parse_runner_axes("torchsweep-old 0.1.0 (abc)\ntorch 2.6.0 cuda none\n").empty());
}

// An executable shell script `name` in `directory`.
std::filesystem::path script(const std::filesystem::path& directory, const std::string& name, const std::string& body) {
  const auto path = directory / name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST(Capabilities, RunnersAreProbedTogetherAndOneWhoseFrameworkDoesNotImportSaysSo) {
  testing::TempDirectory directory("ts_capabilities");
  const auto write = [&](const std::string& name, const std::string& body) {
    return script(directory.path(), name, body);
  };
  const auto probes = own_probes(
      probe_runners(
          {{"good",
            {write("good", "sleep 1; printf 'torchsweep-good 1 (x)\\nnumpy 2.5 jax 0.10\\nmodes eager\\n'\n"), false,
             ""}},
           {"broken", {write("broken", "sleep 1; echo 'ModuleNotFoundError: tensorflow' >&2; exit 1\n"), false, ""}}},
          {}),
      {{"good", {}}, {"broken", {}}});
  EXPECT_TRUE(probes.at("good").answered);
  EXPECT_EQ(probes.at("good").versions.at("jax"), "0.10");
  EXPECT_FALSE(probes.at("broken").answered);
  const auto capabilities = detect_capabilities(probes);
  EXPECT_EQ(capabilities.at("frameworks").at("good").at("numpy"), "2.5");
  EXPECT_EQ(capabilities.at("modes").at("good"), nlohmann::json::array({"eager"}));
  EXPECT_FALSE(capabilities.at("modes").contains("broken"));
  EXPECT_TRUE(capabilities.at("torch_version").is_null());
}

TEST(Capabilities, APythonRunnerIsProbedInEveryEnvironmentOncePerInterpreter) {
  testing::TempDirectory directory("ts_environments");
  const auto write = [&](const std::string& name, const std::string& body) {
    return script(directory.path(), name, body);
  };
  // Interpreters that say which one ran; each call leaves a line in its log.
  const auto interpreter = [&](const std::string& name, const std::string& version) {
    return write(name,
                 "echo x >> " + (directory / (name + ".log")).string() + "\nTORCH=" + version + " exec sh \"$@\"\n");
  };
  const auto old_torch = interpreter("old", "2.6.0");
  const std::map<std::string, std::filesystem::path> environments{
      {"system", old_torch},
      {"same", old_torch},  // another name for the same interpreter
      {"new", interpreter("new", "2.15.0")},
      {"broken", write("broken", "exit 1\n")}};
  const std::map<std::string, Runner> runners{
      {"torch-compile",
       {write("runner.sh", "printf 'torchsweep-torch-compile 1 (x)\\ntorch %s cuda none\\n' $TORCH\n"), true,
        "system"}},
      {"libtorch",
       {write("worker", "printf 'torchsweep-worker 1 (x)\\ntorch 2.6.0 cuda none\\n'\n"), false, "system"}}};
  const auto probes = probe_runners(runners, environments);
  EXPECT_EQ(probes.at({"torch-compile", "system"}).versions.at("torch"), "2.6.0");
  EXPECT_EQ(probes.at({"torch-compile", "same"}).versions.at("torch"), "2.6.0");
  EXPECT_EQ(probes.at({"torch-compile", "new"}).versions.at("torch"), "2.15.0");
  EXPECT_FALSE(probes.at({"torch-compile", "broken"}).answered);
  EXPECT_TRUE(probes.at({"libtorch", "system"}).answered);
  EXPECT_FALSE(probes.contains({"libtorch", "new"}));  // a program of its own runs where it was built
  std::ifstream log(directory / "old.log");
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(log), {}, '\n'), 2);  // --version, --list-models: once

  const auto offered = environment_capabilities(probes, runners, environments);
  EXPECT_EQ(offered.at("new").at("python"), environments.at("new").string());
  EXPECT_EQ(offered.at("new").at("runners"),
            (nlohmann::json{{"torch-compile", {{"torch", "2.15.0"}, {"cuda", nullptr}}}}));
  EXPECT_EQ(offered.at("system").at("runners").size(), 2u);
  EXPECT_FALSE(offered.contains("broken"));
  const auto own = own_probes(probes, runners);
  EXPECT_EQ(own.at("torch-compile").versions.at("torch"), "2.6.0");
}

TEST(Capabilities, APythonRunnersProbeIsKeptUntilItsInterpreterRunnerOrPackagesChange) {
  using namespace std::chrono_literals;
  testing::TempDirectory directory("ts_probe_cache");
  const auto site = directory / "site-packages";
  std::filesystem::create_directories(site);
  const auto interpreter =
      script(directory.path(), "python", "echo x >> " + (directory / "python.log").string() + "\nexec sh \"$@\"\n");
  const auto write_runner = [&](const std::string& torch) {
    return script(directory.path(), "runner.sh",
                  "case \"$1\" in --version) printf 'torchsweep-torch-compile 1 (x)\\ntorch " + torch +
                      " cuda none\\nsite [\"" + site.string() +
                      "\"]\\n';; *) printf 'model description\\nmlp an MLP\\ntimm:resnet50\\n';; esac\n");
  };
  const std::map<std::string, std::filesystem::path> environments{{"venv", interpreter}};
  std::map<std::string, Runner> runners{{"torch-compile", {write_runner("2.15.0"), true, "venv"}},
                                        {"worker",
                                         {script(directory.path(), "worker",
                                                 "echo x >> " + (directory / "worker.log").string() +
                                                     "\nprintf 'torchsweep-worker 1 (x)\\ntorch 2.6.0\\n'\n"),
                                          false, ""}}};
  const auto cache = directory / "work" / "probes.json";
  const auto calls = [&](const std::string& log) {
    std::ifstream in(directory / log);
    return std::count(std::istreambuf_iterator<char>(in), {}, '\n');
  };
  const auto first = probe_runners(runners, environments, cache);
  EXPECT_EQ(first.at({"torch-compile", "venv"}).models, (std::vector<std::string>{"mlp", "timm:resnet50"}));
  EXPECT_EQ(calls("python.log"), 2);  // --version, --list-models
  EXPECT_TRUE(std::filesystem::exists(cache));

  const auto again = probe_runners(runners, environments, cache);
  EXPECT_EQ(calls("python.log"), 2);  // kept
  EXPECT_EQ(again.at({"torch-compile", "venv"}).versions, first.at({"torch-compile", "venv"}).versions);
  EXPECT_EQ(again.at({"torch-compile", "venv"}).models, first.at({"torch-compile", "venv"}).models);
  EXPECT_TRUE(again.at({"torch-compile", "venv"}).answered);
  EXPECT_EQ(calls("worker.log"), 4);  // a program of its own: asked every time

  std::ofstream(site / "timm-1.0.32.dist-info") << "";  // a pip install changes the directory
  probe_runners(runners, environments, cache);
  EXPECT_EQ(calls("python.log"), 4);
  probe_runners(runners, environments, cache);
  EXPECT_EQ(calls("python.log"), 4);

  std::filesystem::last_write_time(runners.at("torch-compile").program,
                                   std::filesystem::last_write_time(runners.at("torch-compile").program) - 1h);
  const auto runner_changed = probe_runners(runners, environments, cache);  // the runner reinstalled
  EXPECT_EQ(calls("python.log"), 6);
  EXPECT_EQ(runner_changed.at({"torch-compile", "venv"}).versions.at("torch"), "2.15.0");
  EXPECT_EQ(probe_runners(runners, environments, {}).size(), 2u);  // no cache file: asked, nothing kept
  EXPECT_EQ(calls("python.log"), 8);

  // One file serves every agent of the user: an entry whose runner is gone is dropped at the next start.
  EXPECT_EQ(json_io::read(cache.string()).size(), 1u);
  std::filesystem::remove(runners.at("torch-compile").program);
  runners.erase("torch-compile");
  probe_runners(runners, environments, cache);
  EXPECT_TRUE(json_io::read(cache.string()).empty());
}

}  // namespace
}  // namespace ts::agent
