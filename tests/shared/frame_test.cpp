#include "shared/wire/frame.hpp"

#include <gtest/gtest.h>

#include "shared/errors.hpp"
#include "shared/wire/endpoint.hpp"

namespace ts::wire {
namespace {

FrameHeader header_of(const std::string& frame) {
  return {static_cast<unsigned char>(frame[0]), static_cast<unsigned char>(frame[1]),
          static_cast<unsigned char>(frame[2]), static_cast<unsigned char>(frame[3])};
}

TEST(Frame, RoundTripsWithABigEndianLength) {
  const nlohmann::json message{{"v", 1}, {"type", "heartbeat"}, {"text", "größe"}};
  const auto frame = encode_frame(message);
  const auto length = payload_length(header_of(frame), default_max_frame_bytes);
  EXPECT_EQ(length, frame.size() - 4);
  EXPECT_EQ(decode_payload(frame.substr(4)), message);
  EXPECT_EQ(payload_length({0x00, 0x01, 0x02, 0x03}, 1u << 20), 0x010203u);
}

TEST(Frame, RefusesLengthsAboveTheMaximumBeforeReadingThem) {
  EXPECT_THROW(payload_length({0xff, 0xff, 0xff, 0xff}, default_max_frame_bytes), FrameError);
  EXPECT_NO_THROW(payload_length({0x00, 0x00, 0x04, 0x00}, 1024));
  EXPECT_THROW(payload_length({0x00, 0x00, 0x04, 0x01}, 1024), FrameError);
  EXPECT_THROW(encode_frame({{"blob", std::string(2000, 'x')}}, 1024), FrameError);
}

TEST(Frame, RefusesPayloadsThatAreNotJsonObjects) {
  EXPECT_THROW(decode_payload("{not json"), FrameError);
  EXPECT_THROW(decode_payload("[1, 2]"), FrameError);
  EXPECT_THROW(decode_payload(""), FrameError);
}

TEST(Endpoint, ParsesHostAndPortAndNamesTheFieldOnError) {
  const auto endpoint = parse_endpoint("127.0.0.1:7000", "--listen");
  EXPECT_EQ(endpoint.host, "127.0.0.1");
  EXPECT_EQ(endpoint.port, 7000);
  EXPECT_EQ(parse_endpoint("[::1]:0", "x").host, "::1");
  for (const char* bad : {"localhost", ":7000", "host:", "host:70000", "host:7x"}) {
    try {
      parse_endpoint(bad, "--listen");
      ADD_FAILURE() << bad;
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), "--listen");
    }
  }
}

}  // namespace
}  // namespace ts::wire
