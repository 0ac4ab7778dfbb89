#include "shared/wire/tls.hpp"

#include "shared/errors.hpp"

namespace ts::wire {
namespace {

std::shared_ptr<ssl::context> modern_context(ssl::context::method method) {
  auto context = std::make_shared<ssl::context>(method);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  return context;
}

// Runs `handshake` on `stream`, closing the socket if `timeout` passes
// first: a peer that connects and says nothing must not hold a session.
asio::awaitable<void> handshake_within(TlsStream& stream, ssl::stream_base::handshake_type type,
                                       std::chrono::steady_clock::duration timeout) {
  asio::steady_timer deadline(stream.get_executor(), timeout);
  bool expired = false;
  deadline.async_wait([&stream, &expired](boost::system::error_code error) {
    if (error) return;  // cancelled: the handshake ended first
    expired = true;
    boost::system::error_code ignored;
    stream.lowest_layer().close(ignored);
  });
  boost::system::error_code error;
  co_await stream.async_handshake(type, asio::redirect_error(asio::use_awaitable, error));
  deadline.cancel();
  if (expired) throw boost::system::system_error(asio::error::timed_out);
  if (error) throw boost::system::system_error(error, "TLS handshake");
}

}  // namespace

std::shared_ptr<ssl::context> server_tls_context(const std::string& certificate_file, const std::string& key_file,
                                                 const std::string& field) {
  auto context = modern_context(ssl::context::tls_server);
  try {
    context->use_certificate_chain_file(certificate_file);
    context->use_private_key_file(key_file, ssl::context::pem);
  } catch (const boost::system::system_error& error) {
    throw InvalidInput(
        field, "cannot use certificate " + certificate_file + " with key " + key_file + ": " + error.code().message());
  }
  return context;
}

std::shared_ptr<ssl::context> client_tls_context(const std::string& ca_file, const std::string& field) {
  auto context = modern_context(ssl::context::tls_client);
  try {
    context->load_verify_file(ca_file);
  } catch (const boost::system::system_error& error) {
    throw InvalidInput(field, "cannot load CA certificates from " + ca_file + ": " + error.code().message());
  }
  context->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  return context;
}

asio::awaitable<TlsStream> tls_accept(asio::ip::tcp::socket socket, ssl::context& context,
                                      std::chrono::steady_clock::duration timeout) {
  TlsStream stream(std::move(socket), context);
  co_await handshake_within(stream, ssl::stream_base::server, timeout);
  co_return stream;
}

asio::awaitable<TlsStream> tls_connect(asio::ip::tcp::socket socket, ssl::context& context, const std::string& host,
                                       std::chrono::steady_clock::duration timeout) {
  TlsStream stream(std::move(socket), context);
  // Server name indication (DNS names only), for a coordinator behind a
  // TLS-terminating proxy.
  boost::system::error_code not_an_address;
  asio::ip::make_address(host, not_an_address);
  // SSL_set_tlsext_host_name, spelled out: the macro casts C-style.
  if (not_an_address) {
    SSL_ctrl(stream.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(host.c_str()));
  }
  stream.set_verify_callback(ssl::host_name_verification(host));
  co_await handshake_within(stream, ssl::stream_base::client, timeout);
  co_return stream;
}

}  // namespace ts::wire
