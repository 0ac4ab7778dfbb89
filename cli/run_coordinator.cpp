#include <sys/resource.h>

#include <boost/asio.hpp>
#include <csignal>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/shutdown.hpp"
#include "coordinator/coordinator.hpp"
#include "shared/errors.hpp"
#include "shared/log.hpp"
#include "shared/seconds.hpp"
#include "shared/wire/authentication.hpp"

namespace ts::cli {
namespace {

// Every session is a socket: the soft open-files limit (often 1,024) goes up
// to the hard one. A --max-connections asked for above what that leaves is
// refused; the default, where the hard limit is low, only warned about.
void raise_open_files_limit(std::size_t connections, bool asked) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  getrlimit(RLIMIT_NOFILE, &limit);
  constexpr rlim_t reserve = 64;  // the store, its WAL, /metrics, logs
  if (limit.rlim_cur == RLIM_INFINITY || connections + reserve <= limit.rlim_cur) return;
  const auto problem = std::to_string(connections) + " sessions need more open files than the " +
                       std::to_string(limit.rlim_cur) + " allowed (ulimit -Hn)";
  if (asked) throw InvalidInput("--max-connections", problem + "; raise the hard limit or ask for fewer");
  log::warn("{}: sessions past the limit will be refused", problem);
}

}  // namespace

Command add_coordinator_command(CLI::App& app) {
  auto* command = app.add_subcommand("coordinator", "run the coordinator: schedules sweeps to agents over TCP");
  struct Settings {
    std::string listen = "127.0.0.1:7000";
    std::string port_file;
    std::string db = "torchsweep.db";
    double heartbeat_s = seconds_of(coordinator::CoordinatorOptions{}.heartbeat_interval);
    double reattach_grace_s = seconds_of(coordinator::RegistryOptions{}.reattach_grace);
    double deadline_margin_s = seconds_of(coordinator::RegistryOptions{}.deadline_margin);
    std::string token_file, tls_cert, tls_key;
    std::string metrics_listen, metrics_port_file;
    std::size_t max_connections = coordinator::CoordinatorOptions{}.max_connections;
    std::size_t reader_threads = coordinator::CoordinatorOptions{}.reader_threads;
  };
  auto settings = std::make_shared<Settings>();
  command->add_option("--listen", settings->listen, "HOST:PORT to listen on (PORT 0: any free port)")
      ->capture_default_str();
  command->add_option("--db", settings->db, "the SQLite store (created if missing)")->capture_default_str();
  command->add_option("--port-file", settings->port_file, "write the bound port to this file once listening");
  command->add_option("--heartbeat-s", settings->heartbeat_s, "agent heartbeat interval; 3 missed = agent lost")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--token-file", settings->token_file,
                      "file holding the shared token peers must prove (default: $TORCHSWEEP_TOKEN; without one, "
                      "loopback only)");
  auto* cert = command->add_option("--tls-cert", settings->tls_cert,
                                   "serve TLS with this PEM certificate (chain) file; needs --tls-key "
                                   "(docs/security.md)");
  auto* key = command->add_option("--tls-key", settings->tls_key, "the PEM private key of --tls-cert");
  cert->needs(key);
  key->needs(cert);
  command->add_option("--metrics-listen", settings->metrics_listen,
                      "serve Prometheus metrics at http://HOST:PORT/metrics (PORT 0: any free port); plain HTTP "
                      "without authentication: bind an address only the monitoring network reaches");
  command->add_option("--metrics-port-file", settings->metrics_port_file,
                      "write the port /metrics is served on to this file once listening");
  auto* max_connections =
      command
          ->add_option("--max-connections", settings->max_connections,
                       "agent and client sessions at once (each one open file; the open-files limit is raised to the "
                       "hard limit, which must exceed this)")
          ->capture_default_str()
          ->check(CLI::PositiveNumber);
  command
      ->add_option("--reader-threads", settings->reader_threads,
                   "threads that parse and validate agents' results and clients' submissions off the event loop "
                   "(0: one fewer than the cores, 1 to 4; docs/operations.md)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{64}));
  command
      ->add_option("--reattach-grace-s", settings->reattach_grace_s,
                   "how long a running job waits for its lost agent to come back before it is queued again")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--deadline-margin-s", settings->deadline_margin_s,
                   "added to a job's timeout_s: the coordinator's own deadline for an attempt")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  return [settings, max_connections] {
    boost::asio::io_context io;
    coordinator::CoordinatorOptions options;
    options.listen = wire::parse_endpoint(settings->listen, "--listen");
    options.heartbeat_interval = milliseconds_from_seconds(settings->heartbeat_s);
    options.token = wire::load_token(settings->token_file);
    if (!settings->tls_cert.empty()) {
      options.tls = wire::server_tls_context(settings->tls_cert, settings->tls_key, "--tls-cert");
    }
    if (!settings->metrics_listen.empty()) {
      options.metrics_listen = wire::parse_endpoint(settings->metrics_listen, "--metrics-listen");
    }
    options.max_connections = settings->max_connections;
    options.reader_threads = settings->reader_threads;
    raise_open_files_limit(settings->max_connections, max_connections->count() > 0);
    options.jobs.reattach_grace = milliseconds_from_seconds(settings->reattach_grace_s);
    options.jobs.deadline_margin = milliseconds_from_seconds(settings->deadline_margin_s);
    // Past a file-size limit the store's writes fail (and the coordinator
    // exits saying so) instead of the kernel killing it without a word.
    std::signal(SIGXFSZ, SIG_IGN);
    store::Store store(settings->db);
    coordinator::Coordinator server(io, options, store);
    server.start();
    auto write_port = [](const std::string& file, std::uint16_t port) {
      if (file.empty()) return;
      const auto temporary = file + ".tmp";
      std::ofstream(temporary) << port << "\n";
      std::rename(temporary.c_str(), file.c_str());
    };
    write_port(settings->metrics_port_file, server.metrics_port());
    write_port(settings->port_file, server.port());
    const auto signals = stop_on_signals(io, [&] { server.stop(); });
    io.run();
    return exit_code::ok;
  };
}

}  // namespace ts::cli
