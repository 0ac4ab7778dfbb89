#include "runners/libtorch/fusion_observer.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>

namespace ts::worker {
namespace {

// RecordFunction takes plain function pointers, so what they record must
// live at namespace scope; one observer at a time owns it.
struct Observed {
  std::mutex mutex;
  std::map<std::string, int64_t> launches;
  bool owned = false;
};

Observed& observed() {
  static Observed instance;
  return instance;
}

std::unique_ptr<at::ObserverContext> on_function_start(const at::RecordFunction& function) {
  const std::string_view name = function.name();
  if (name.starts_with("fused_")) {
    auto& o = observed();
    std::lock_guard lock(o.mutex);
    ++o.launches[std::string(name)];
  }
  return nullptr;
}

}  // namespace

FusionObserver::FusionObserver() {
  auto& o = observed();
  {
    std::lock_guard lock(o.mutex);
    if (o.owned) throw std::logic_error("only one FusionObserver may be alive at a time");
    o.owned = true;
    o.launches.clear();
  }
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_function_start).scopes({at::RecordScope::FUNCTION}));
}

FusionObserver::~FusionObserver() {
  at::removeCallback(handle_);
  auto& o = observed();
  std::lock_guard lock(o.mutex);
  o.owned = false;
}

FusionReport FusionObserver::report() const {
  auto& o = observed();
  std::lock_guard lock(o.mutex);
  FusionReport report;
  for (const auto& [name, count] : o.launches) {
    report.kernel_names.push_back(name);
    report.fused_launches_per_step += count;
  }
  report.fused_kernels = static_cast<int64_t>(report.kernel_names.size());
  return report;
}

}  // namespace ts::worker
