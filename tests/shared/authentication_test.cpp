#include "shared/wire/authentication.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "shared/errors.hpp"
#include "tests/support/temp_directory.hpp"

namespace ts::wire {
namespace {

TEST(Authentication, HmacSha256MatchesRfc4231) {
  // RFC 4231, test case 2.
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Authentication, MacsBindTheNoncesRoleAndName) {
  const std::string token = "0123456789abcdef", nc = random_nonce(), np = random_nonce();
  EXPECT_EQ(nc.size(), 64u);
  EXPECT_NE(nc, np);
  const auto mac = peer_mac(token, nc, np, "agent", "node-a");
  EXPECT_TRUE(equal_in_constant_time(mac, peer_mac(token, nc, np, "agent", "node-a")));
  EXPECT_FALSE(equal_in_constant_time(mac, peer_mac(token, nc, np, "client", "node-a")));
  EXPECT_FALSE(equal_in_constant_time(mac, peer_mac(token, nc, np, "agent", "node-b")));
  EXPECT_FALSE(equal_in_constant_time(mac, peer_mac(token, np, nc, "agent", "node-a")));
  EXPECT_FALSE(equal_in_constant_time(mac, peer_mac("fedcba9876543210", nc, np, "agent", "node-a")));
  EXPECT_NE(coordinator_proof(token, nc, np), mac);
  EXPECT_FALSE(equal_in_constant_time("abc", "abcd"));
}

TEST(Authentication, TokensComeFromAFileOrTheEnvironmentAndMustBeLong) {
  testing::TempDirectory directory("ts_token");
  const auto file = directory.path() / "token";
  std::ofstream(file) << "  a-token-of-enough-length\n";
  EXPECT_EQ(load_token(file.string()), "a-token-of-enough-length");
  std::ofstream(file) << "short";
  EXPECT_THROW(load_token(file.string()), InvalidInput);
  EXPECT_THROW(load_token((directory.path() / "missing").string()), InvalidInput);
  ::setenv("TORCHSWEEP_TOKEN", "from-the-environment-1234", 1);
  EXPECT_EQ(load_token(""), "from-the-environment-1234");
  ::unsetenv("TORCHSWEEP_TOKEN");
  EXPECT_EQ(load_token(""), std::nullopt);
}

}  // namespace
}  // namespace ts::wire
