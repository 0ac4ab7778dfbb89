#pragma once
// Optional TLS on every connection (docs/security.md). The coordinator
// presents a certificate and key; agents and clients verify it against a CA
// file and the host name they dialled. The shared-token handshake still
// runs inside: TLS adds confidentiality and integrity to the traffic that
// the token only authenticates.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <memory>
#include <string>

namespace ts::wire {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using TlsStream = ssl::stream<asio::ip::tcp::socket>;

// TLS 1.2 or later. Throws ts::InvalidInput naming `field` when a file
// cannot be read or the key does not match the certificate.
std::shared_ptr<ssl::context> server_tls_context(const std::string& certificate_file, const std::string& key_file,
                                                 const std::string& field);
std::shared_ptr<ssl::context> client_tls_context(const std::string& ca_file, const std::string& field);

// The TLS handshake over `socket`, within `timeout`. A client checks that
// the certificate names `host` (a DNS name or an IP address).
asio::awaitable<TlsStream> tls_accept(asio::ip::tcp::socket socket, ssl::context& context,
                                      std::chrono::steady_clock::duration timeout);
asio::awaitable<TlsStream> tls_connect(asio::ip::tcp::socket socket, ssl::context& context, const std::string& host,
                                       std::chrono::steady_clock::duration timeout);

}  // namespace ts::wire
