#include "shared/wire/attachment.hpp"

#include <gtest/gtest.h>

#include "shared/digest.hpp"
#include "shared/errors.hpp"

namespace ts::wire {
namespace {

TEST(Attachment, ContentsOfEverySizeComeBackAsTheyWent) {
  std::string binary;
  for (int i = 0; i < 1000; ++i) binary += static_cast<char>(i * 7 % 256);  // zeros and high bytes too
  for (const std::size_t size : {0u, 1u, 2u, 3u, 4u, 5u, 999u, 1000u}) {
    const auto contents = binary.substr(0, size);
    const auto attachment = attachment_of(contents);
    EXPECT_EQ(attachment.at("bytes"), size);
    EXPECT_EQ(attachment.at("data").get<std::string>().size(), 4 * ((size + 2) / 3));
    EXPECT_EQ(attachment.at("sha256"), sha256_hex(contents));
    // Through a message's text and back.
    EXPECT_EQ(contents_of(nlohmann::json::parse(attachment.dump()), "trace"), contents) << size;
  }
  EXPECT_EQ(attachment_of("hello").at("data"), "aGVsbG8=");  // RFC 4648 base64, padded
}

TEST(Attachment, ADamagedOrMisstatedAttachmentIsRefusedNamingTheField) {
  const auto good = attachment_of("a trace, gzip in real life");
  const auto refused = [](const nlohmann::json& attachment, const std::string& field, const std::string& words) {
    try {
      contents_of(attachment, "trace");
      ADD_FAILURE() << "accepted " << attachment.dump();
    } catch (const InvalidInput& error) {
      EXPECT_EQ(error.field(), field);
      EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    }
  };
  auto flipped = good;
  auto data = flipped["data"].get<std::string>();
  data[3] = data[3] == 'A' ? 'B' : 'A';
  flipped["data"] = data;
  refused(flipped, "trace.sha256", "the data's SHA-256 is");
  auto shorter = good;
  shorter["bytes"] = 3;
  refused(shorter, "trace.data", "expected base64 of 3 bytes");
  auto garbage = good;
  garbage["data"] = std::string(good.at("data").get<std::string>().size(), '*');
  refused(garbage, "trace.data", "expected base64");
  auto missing = good;
  missing.erase("sha256");
  refused(missing, "trace.sha256", "expected the attachment's sha256");
  auto negative = good;
  negative["bytes"] = -1;
  refused(negative, "trace.bytes", "expected the attachment's bytes");
}

}  // namespace
}  // namespace ts::wire
