// libFuzzer target: a sweep file's text through YAML parsing, validation
// and expansion, as `torchsweep submit` and the coordinator do. The only
// acceptable failure is ts::InvalidInput naming what is wrong; matrices are
// capped so a valid input cannot expand for minutes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "shared/errors.hpp"
#include "shared/sweep/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const auto document = ts::sweep::parse_yaml(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    std::size_t jobs = 1;
    if (document.is_object() && document.contains("axes") && document["axes"].is_object()) {
      for (const auto& [axis, values] : document["axes"].items()) jobs *= values.is_array() ? values.size() + 1 : 1;
    }
    if (document.is_object() && document.value("repeats", nlohmann::json(1)).is_number_integer()) {
      jobs *= static_cast<std::size_t>(std::max<int64_t>(1, document.value("repeats", int64_t{1})));
    }
    if (jobs > 10000) return 0;
    const auto sweep = ts::sweep::expand(document, "fuzz.yaml");
    if (sweep.jobs.empty() && sweep.configurations > 0) __builtin_trap();
  } catch (const ts::InvalidInput&) {
  }
  return 0;
}
