#pragma once
// A short client exchange with the coordinator: connect, hello, one
// request, one reply.
#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "shared/wire/endpoint.hpp"
#include "shared/wire/tls.hpp"

namespace ts::cli {

// Sends `request` and returns the reply. Throws ts::InvalidInput if the
// coordinator refused the request, std::runtime_error if it could not be
// reached or did not answer within `timeout`.
nlohmann::json request(const wire::Endpoint& coordinator, const nlohmann::json& request,
                       const std::optional<std::string>& token, wire::ssl::context* tls = nullptr,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The options every client command shares: where the coordinator is, and
// the file with the shared token ($TORCHSWEEP_TOKEN otherwise).
struct ClientSettings {
  std::string coordinator = "127.0.0.1:7000";
  std::string token_file;
  std::string tls_ca;  // empty: plain TCP
};
void add_client_options(CLI::App* command, ClientSettings& settings);
nlohmann::json request(const ClientSettings& settings, const nlohmann::json& message);

// --tls-ca FILE, shared by clients and agents, and the context it makes
// (null without one).
void add_tls_ca_option(CLI::App* command, std::string& ca_file);
std::shared_ptr<wire::ssl::context> client_tls(const std::string& ca_file);

// --peak-probe cached|fresh|off of agents (agent/node/peak_flops.hpp).
void add_peak_probe_option(CLI::App* command, std::string& mode);

// --data-root DIR of agents (repeatable): where jobs may read imagefolder data.
void add_data_root_option(CLI::App* command, std::vector<std::string>& roots);
// --model-path DIR of agents (repeatable): where python: and torchscript: models may be found.
void add_model_path_option(CLI::App* command, std::vector<std::string>& roots);

// --env NAME=PYTHON of agents (repeatable): an environment runners may run
// in (docs/environments.md), read into `environments`. Names follow the job
// schema's `env`; the interpreter must be an executable file.
void add_environment_option(CLI::App* command, std::map<std::string, std::filesystem::path>& environments);

// --price-per-hour DEVICE=PRICE of agents (repeatable): a device's price
// per hour, by its name as results name it (device_name), for each result's
// cost (docs/methodology.md); parse_prices reads the entries, throwing
// ts::InvalidInput for a price that is not a number of 0 or more.
void add_price_option(CLI::App* command, std::vector<std::string>& entries);
std::map<std::string, double> parse_prices(const std::vector<std::string>& entries);

// USER@HOST, recorded as a sweep's submitter.
std::string submitter_name();

}  // namespace ts::cli
