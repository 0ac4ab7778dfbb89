#pragma once
// A file carried inside a protocol message (docs/protocol.md, job_result's
// trace): its bytes in base64 with their size and SHA-256, checked on
// arrival so a damaged or truncated copy is never stored as the original.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ts::wire {

// {sha256, bytes, data}: `contents` as a message carries it.
nlohmann::json attachment_of(std::string_view contents);
// The contents of an attachment; throws ts::InvalidInput naming `field`
// when it is malformed or its size or SHA-256 is not the one it states.
std::string contents_of(const nlohmann::json& attachment, const std::string& field);

}  // namespace ts::wire
