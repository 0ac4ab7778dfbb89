#include "cli/client.hpp"

#include <unistd.h>

#include <boost/asio.hpp>
#include <cstdlib>
#include <regex>

#include "cli/key_value.hpp"
#include "shared/errors.hpp"
#include "shared/host_name.hpp"
#include "shared/version.hpp"
#include "shared/wire/authentication.hpp"
#include "shared/wire/connection.hpp"
#include "shared/wire/dial.hpp"
#include "shared/wire/handshake.hpp"
#include "shared/wire/protocol.hpp"

namespace ts::cli {

namespace asio = boost::asio;

nlohmann::json request(const wire::Endpoint& coordinator, const nlohmann::json& message,
                       const std::optional<std::string>& token, wire::ssl::context* tls,
                       std::chrono::milliseconds timeout) {
  asio::io_context io;
  nlohmann::json reply;
  std::exception_ptr failure;
  auto exchange = [&]() -> asio::awaitable<void> {
    auto connection = co_await wire::dial(coordinator, tls, timeout);
    // A fatal error is a refusal of this peer (exit 4); any other, of the request (exit 2).
    const auto check = [&](const nlohmann::json& answer) {
      if (wire::validate_message(answer) != "error") return;
      connection->stop();
      const auto why = "coordinator refused: " + answer.at("reason").get<std::string>();
      if (answer.value("fatal", false)) throw std::runtime_error(why);
      throw InvalidInput(answer.value("field", ""), why);
    };
    // Named, not a braced list inside co_await: GCC 12 rejects that ("array used as initializer").
    const nlohmann::json hello{
        {"role", "client"}, {"name", "torchsweep-cli"}, {"version", std::string(version::number())}};
    check(co_await wire::peer_handshake(*connection, hello, token, timeout));
    connection->send(message);
    reply = co_await wire::receive_within(*connection, timeout);
    check(reply);
    connection->stop();
  };
  // The exchange is all there is to do: when it ends, however it ends, so
  // does the io_context (a connection's idle writer would keep it running).
  asio::co_spawn(io, exchange(), [&](std::exception_ptr error) {
    failure = error;
    io.stop();
  });
  io.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const InvalidInput&) {
      throw;
    } catch (const std::exception& error) {
      throw std::runtime_error("coordinator " + coordinator.text() + ": " + error.what());
    }
  }
  return reply;
}

void add_client_options(CLI::App* command, ClientSettings& settings) {
  command->add_option("--coordinator", settings.coordinator, "coordinator HOST:PORT")->capture_default_str();
  command->add_option("--token-file", settings.token_file,
                      "file holding the shared token (default: $TORCHSWEEP_TOKEN; docs/security.md)");
  add_tls_ca_option(command, settings.tls_ca);
}

void add_tls_ca_option(CLI::App* command, std::string& ca_file) {
  command->add_option("--tls-ca", ca_file,
                      "connect over TLS, trusting the coordinator's certificate if this CA file signed it "
                      "(docs/security.md)");
}

void add_peak_probe_option(CLI::App* command, std::string& mode) {
  command
      ->add_option("--peak-probe", mode,
                   "the devices' peak FLOP/s for utilisation figures: cached (measured once, kept in the work "
                   "directory), fresh (measured at every start) or off (docs/methodology.md)")
      ->capture_default_str();
}

void add_data_root_option(CLI::App* command, std::vector<std::string>& roots) {
  command->add_option("--data-root", roots,
                      "a directory under which jobs may read data: {folder: ...} (repeatable; docs/data.md)");
}

void add_model_path_option(CLI::App* command, std::vector<std::string>& roots) {
  command->add_option("--model-path", roots,
                      "a directory holding the user's own models: python:MODULE:FACTORY modules and torchscript:FILE "
                      "files (repeatable; its code runs in the runners: docs/models.md)");
}

void add_environment_option(CLI::App* command, std::map<std::string, std::filesystem::path>& environments) {
  command
      ->add_option_function<std::vector<std::string>>(
          "--env",
          [&environments](const std::vector<std::string>& entries) {
            static const std::regex name("^[A-Za-z0-9_.+-]{1,64}$");  // job.schema.json's env
            for (const auto& entry : entries) {
              auto [key, python] = split_key_value(entry, "--env");
              if (!std::regex_match(key, name)) {
                throw InvalidInput("--env",
                                   "'" + key + "' is not an environment name (letters, digits, _.+-; up to 64)");
              }
              if (::access(python.c_str(), X_OK) != 0) {
                throw InvalidInput("--env", key + "=" + python + ": not an executable file (a Python interpreter)");
              }
              environments.insert_or_assign(key, std::filesystem::path(python));
            }
          },
          "NAME=PYTHON: an environment runners may run in, e.g. a conda env's python (repeatable; "
          "docs/environments.md)")
      ->take_all();
}

void add_price_option(CLI::App* command, std::vector<std::string>& entries) {
  command->add_option("--price-per-hour", entries,
                      "DEVICE=PRICE: what an hour of a device costs, by its name as results give it (e.g. "
                      "'NVIDIA H200=3.5'; repeatable): each result's cost per million samples and of its run "
                      "(docs/methodology.md)");
}

std::map<std::string, double> parse_prices(const std::vector<std::string>& entries) {
  std::map<std::string, double> prices;
  for (const auto& entry : entries) {
    const auto [device, text] = split_key_value(entry, "--price-per-hour");
    std::size_t used = 0;
    double price = -1;
    try {
      price = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || !(price >= 0)) {
      throw InvalidInput("--price-per-hour", device + "=" + text + ": expected a price of 0 or more");
    }
    prices.insert_or_assign(device, price);
  }
  return prices;
}

std::shared_ptr<wire::ssl::context> client_tls(const std::string& ca_file) {
  return ca_file.empty() ? nullptr : wire::client_tls_context(ca_file, "--tls-ca");
}

nlohmann::json request(const ClientSettings& settings, const nlohmann::json& message) {
  const auto tls = client_tls(settings.tls_ca);
  return request(wire::parse_endpoint(settings.coordinator, "--coordinator"), message,
                 wire::load_token(settings.token_file), tls.get());
}

std::string submitter_name() {
  const char* user = std::getenv("USER");
  return std::string(user ? user : "unknown") + "@" + host_name();
}

}  // namespace ts::cli
