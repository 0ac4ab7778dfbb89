#pragma once
// A short client exchange with the coordinator: connect, hello, one
// request, one reply.
#include <chrono>
#include <nlohmann/json.hpp>

#include "shared/wire/endpoint.hpp"

namespace ts::cli {

// Sends `request` and returns the reply. Throws ts::InvalidInput if the
// coordinator refused the request, std::runtime_error if it could not be
// reached or did not answer within `timeout`.
nlohmann::json request(const wire::Endpoint& coordinator, const nlohmann::json& request,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

// USER@HOST, recorded as a sweep's submitter.
std::string submitter_name();

}  // namespace ts::cli
