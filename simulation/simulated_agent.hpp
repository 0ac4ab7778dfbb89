#pragma once
// An agent that speaks the protocol but runs nothing: it answers each
// assignment with a canned result (the job's own document inside) after
// `hold`, and checks that no GPU is handed out twice. For the scheduling
// benchmark (many agents in one process) and GPU-fit tests (any GPUs).
#include <boost/asio.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "shared/version.hpp"
#include "shared/wire/connection.hpp"
#include "shared/wire/endpoint.hpp"
#include "shared/wire/protocol.hpp"
#include "simulation/synthetic_result.hpp"

namespace ts::simulation {

struct SimulatedAgentStats {
  std::size_t completed = 0;
  std::size_t gpu_conflicts = 0;  // an assignment named a GPU already in use here
  std::size_t max_gpus_in_use = 0;
  std::size_t max_jobs_at_once = 0;
};

class SimulatedAgent {
 public:
  // `gpus`: how many GPUs to claim (name "NVIDIA H100 80GB HBM3", 80 GB each).
  // `heartbeat`: how often it says it is alive (the coordinator's default
  // interval is 2 s; tests want quicker).
  // What a fleet of one image says of its runners' models (capabilities
  // "models" and "environments"): `models` as the hello carries them, with
  // each list's digest in its place (shared/model_lists.hpp) when `lists`
  // holds the lists by digest, to send when the welcome asks; with the names
  // inline otherwise, as agents did before.
  struct Models {
    nlohmann::json capabilities = nlohmann::json::object();
    std::map<std::string, nlohmann::json> lists;
  };
  SimulatedAgent(boost::asio::io_context& io, wire::Endpoint coordinator, std::string name, int gpus,
                 std::chrono::milliseconds hold, std::chrono::milliseconds heartbeat = std::chrono::milliseconds(250),
                 std::shared_ptr<const Models> models = std::make_shared<const Models>())
      : io_(io),
        coordinator_(std::move(coordinator)),
        name_(std::move(name)),
        gpus_(gpus),
        hold_(hold),
        heartbeat_(heartbeat),
        models_(std::move(models)) {
    result_template_ = make_result({});
  }

  void start() { boost::asio::co_spawn(io_, run(), boost::asio::detached); }
  void stop() {
    if (connection_) connection_->stop();
  }
  const SimulatedAgentStats& stats() const { return stats_; }

 private:
  boost::asio::awaitable<void> run() {
    namespace asio = boost::asio;
    try {
      asio::ip::tcp::socket socket(io_);
      co_await socket.async_connect({asio::ip::make_address(coordinator_.host), coordinator_.port},
                                    asio::use_awaitable);
      connection_ = std::make_shared<wire::Connection>(std::move(socket));
      connection_->start();
      nlohmann::json gpus = nlohmann::json::array();
      for (int i = 0; i < gpus_; ++i) {
        gpus.push_back({{"index", i}, {"name", "NVIDIA H100 80GB HBM3"}, {"memory_bytes", int64_t{80} << 30}});
      }
      nlohmann::json capabilities{{"hostname", name_},
                                  {"cpu_cores", 2},
                                  {"memory_bytes", int64_t{1} << 34},
                                  {"gpus", gpus},
                                  {"runners", {"libtorch"}}};
      capabilities.update(models_->capabilities);
      connection_->send(wire::make_message("hello", {{"role", "agent"},
                                                     {"name", name_},
                                                     {"version", std::string(version::number())},
                                                     {"capabilities", capabilities}}));
      while (!connection_->stopped()) {
        const auto message = co_await connection_->receive();
        if (message.at("type") == "assign") asio::co_spawn(io_, answer(message), asio::detached);
        if (message.at("type") == "welcome") {
          // The lists the coordinator lacks come first, then the heartbeats.
          if (message.contains("send_lists")) {
            nlohmann::json asked = nlohmann::json::object();
            for (const auto& digest : message.at("send_lists"))
              asked[digest.get<std::string>()] = models_->lists.at(digest);
            connection_->send(wire::make_message("lists", {{"lists", asked}}));
          }
          asio::co_spawn(io_, heartbeats(connection_), asio::detached);
        }
      }
    } catch (const std::exception&) {
      // The coordinator went away or the run ended.
    }
  }

  boost::asio::awaitable<void> heartbeats(std::shared_ptr<wire::Connection> connection) {
    boost::asio::steady_timer timer(io_);
    while (!connection->stopped()) {
      nlohmann::json running = nlohmann::json::array();
      for (const auto& [job_id, attempt] : attempts_) running.push_back({{"job_id", job_id}, {"attempt", attempt}});
      connection->send(wire::make_message("heartbeat", {{"running", running}}));
      timer.expires_after(heartbeat_);
      boost::system::error_code ignored;
      co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ignored));
    }
  }

  boost::asio::awaitable<void> answer(nlohmann::json assign) {
    const auto gpus = assign.at("gpus").get<std::vector<int64_t>>();
    const auto job_id = assign.at("job_id").get<std::string>();
    attempts_[job_id] = assign.at("attempt").get<int64_t>();
    for (const auto gpu : gpus) {
      if (!in_use_.insert(gpu).second) ++stats_.gpu_conflicts;
    }
    ++running_;
    stats_.max_gpus_in_use = std::max(stats_.max_gpus_in_use, in_use_.size());
    stats_.max_jobs_at_once = std::max(stats_.max_jobs_at_once, running_);
    if (hold_.count() > 0) {
      boost::asio::steady_timer timer(io_, hold_);
      co_await timer.async_wait(boost::asio::use_awaitable);
    }
    auto result = result_template_;
    result["job"] = assign.at("job");
    result = judged(std::move(result));
    for (const auto gpu : gpus) in_use_.erase(gpu);
    attempts_.erase(job_id);
    --running_;
    ++stats_.completed;
    if (connection_ && !connection_->stopped()) {
      connection_->send(wire::make_message(
          "job_result", {{"job_id", assign.at("job_id")}, {"attempt", assign.at("attempt")}, {"result", result}}));
    }
  }

  boost::asio::io_context& io_;
  wire::Endpoint coordinator_;
  std::string name_;
  int gpus_;
  std::chrono::milliseconds hold_;
  nlohmann::json result_template_;
  std::shared_ptr<wire::Connection> connection_;
  std::set<int64_t> in_use_;
  std::chrono::milliseconds heartbeat_;
  std::shared_ptr<const Models> models_;
  std::map<std::string, int64_t> attempts_;  // running job -> attempt, for the heartbeats
  std::size_t running_ = 0;
  SimulatedAgentStats stats_;
};

}  // namespace ts::simulation
