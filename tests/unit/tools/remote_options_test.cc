// The remote flags of get/put/ls: sizes with units, validation as usage
// errors, and -v switching the request log on.
#include "tools/ferry/remote_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/ferry/cli.h"

namespace ferry::cli {
namespace {

TEST(ParseByteSizeTest, UnitsArePowersOf1024) {
  EXPECT_EQ(*ParseByteSize("8M", "--part-size", 0, UINT64_MAX), 8u << 20);
  EXPECT_EQ(*ParseByteSize("64MiB", "--part-size", 0, UINT64_MAX), 64u << 20);
  EXPECT_EQ(*ParseByteSize("64mb", "--part-size", 0, UINT64_MAX), 64u << 20);
  EXPECT_EQ(*ParseByteSize("3k", "x", 0, UINT64_MAX), 3u << 10);
  EXPECT_EQ(*ParseByteSize("2G", "x", 0, UINT64_MAX), uint64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("1T", "x", 0, UINT64_MAX), uint64_t{1} << 40);
  EXPECT_EQ(*ParseByteSize("1048576", "x", 0, UINT64_MAX), 1048576u);
  EXPECT_EQ(*ParseByteSize("0", "x", 0, UINT64_MAX), 0u);
}

TEST(ParseByteSizeTest, RefusesWhatIsNotASize) {
  for (const char* bad :
       {"", "M", "-1", "8 M", "8X", "8MM", "1.5M", "0x10", "8Mi B", "+8"}) {
    auto r = ParseByteSize(bad, "--part-size", 0, UINT64_MAX);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsInvalidArgument());
    EXPECT_NE(r.status().message().find("--part-size"), std::string::npos);
  }
}

TEST(ParseByteSizeTest, RangeIsChecked) {
  EXPECT_FALSE(ParseByteSize("512", "x", 1024, 2048).ok());
  EXPECT_FALSE(ParseByteSize("3K", "x", 1024, 2048).ok());
  // Would wrap around when shifted: out of range, not a small number.
  EXPECT_FALSE(
      ParseByteSize("18446744073709551615K", "x", 0, UINT64_MAX >> 1).ok());
  EXPECT_FALSE(ParseByteSize("99999999999999999999", "x", 0, UINT64_MAX).ok());
  // At or beyond 2^64 bytes with a unit: out of range even for hi = max.
  for (const char* big :
       {"18014398509481985K", "99999999T", "16777216T", "17179869184G"}) {
    auto r = ParseByteSize(big, "--bwlimit", 0, UINT64_MAX);
    ASSERT_FALSE(r.ok()) << big;
    EXPECT_TRUE(r.status().IsInvalidArgument());
  }
  EXPECT_EQ(*ParseByteSize("16777215T", "x", 0, UINT64_MAX),
            uint64_t{16777215} << 40);
}

struct Parsed {
  RemoteOptions options;
  CommonOptions common;
  bool ok = true;
  std::string error;
};

Parsed Parse(std::vector<std::string> args, bool with_common) {
  Parsed p;
  CLI::App app;
  CLI::App* cmd = app.add_subcommand("ls");
  if (with_common) AddCommonOptions(cmd, &p.common);
  AddRemoteOptions(cmd, &p.options);
  args.insert(args.begin(), "ls");
  std::reverse(args.begin(), args.end());  // CLI11 wants them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    p.ok = false;
    p.error = e.what();
  }
  return p;
}

TEST(RemoteOptionsTest, FlagsFillTheOptions) {
  Parsed p = Parse({"--endpoint-url",
                    "http://127.0.0.1:9000",
                    "--region",
                    "eu-west-1",
                    "--profile",
                    "dev",
                    "--ca-bundle",
                    "/ca.pem",
                    "--s3-addressing",
                    "path",
                    "--no-sign-request",
                    "--header",
                    "Authorization: Bearer x",
                    "--header",
                    "X-A: 1",
                    "--connections",
                    "32",
                    "--part-size",
                    "16M",
                    "--bwlimit",
                    "50M",
                    "--retries",
                    "3"},
                   true);
  ASSERT_TRUE(p.ok) << p.error;
  const RemoteOptions& o = p.options;
  EXPECT_EQ(o.endpoint_url, "http://127.0.0.1:9000");
  EXPECT_EQ(o.region, "eu-west-1");
  EXPECT_EQ(o.profile, "dev");
  EXPECT_EQ(o.ca_bundle, "/ca.pem");
  EXPECT_EQ(o.addressing, "path");
  EXPECT_TRUE(o.no_sign_request);
  EXPECT_EQ(o.headers,
            (std::vector<std::string>{"Authorization: Bearer x", "X-A: 1"}));
  EXPECT_EQ(o.connections, 32);
  EXPECT_EQ(o.part_size, 16u << 20);
  EXPECT_EQ(o.bwlimit, 50u << 20);
  EXPECT_EQ(o.max_retries, 3);
  EXPECT_FALSE(o.log);
}

TEST(RemoteOptionsTest, DefaultsStayWhenNotGiven) {
  Parsed p = Parse({}, true);
  ASSERT_TRUE(p.ok) << p.error;
  RemoteOptions d;
  EXPECT_EQ(p.options.connections, d.connections);
  EXPECT_EQ(p.options.part_size, d.part_size);
  EXPECT_EQ(p.options.bwlimit, 0u);
  EXPECT_EQ(p.options.max_retries, d.max_retries);
  EXPECT_TRUE(p.options.addressing.empty());
}

TEST(RemoteOptionsTest, BadValuesAreUsageErrors) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--s3-addressing", "dns"},
        {"--header", "no colon"},
        {"--header", ": empty name"},
        {"--header", "Bad Name: x"},
        {"--connections", "0"},
        {"--part-size", "12Q"},
        {"--part-size", "100"},  // below 1 KiB
        {"--bwlimit", "fast"},
        {"--retries", "-1"}}) {
    Parsed p = Parse(args, true);
    EXPECT_FALSE(p.ok) << args[0] << " " << args[1];
  }
}

TEST(RemoteOptionsTest, VerboseTurnsOnTheRequestLog) {
  EXPECT_TRUE(Parse({"-v"}, true).options.log);
  EXPECT_TRUE(Parse({"--verbose"}, false).options.log);
  EXPECT_TRUE(Parse({"-v"}, false).options.log);
  EXPECT_FALSE(Parse({}, false).options.log);
}

}  // namespace
}  // namespace ferry::cli
