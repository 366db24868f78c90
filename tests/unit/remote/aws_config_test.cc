#include "remote/aws_config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "remote/aws_ini.h"
#include "testutil/test_util.h"

namespace ferry::remote {
namespace {

constexpr char kSecret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr char kToken[] = "FwoGZXIvYXdzEXAMPLETOKEN";

class AwsConfigTest : public ::testing::Test {
 protected:
  // ~/.aws/<name>
  void WriteAws(const std::string& name, const std::string& text) {
    test::WriteFile(Env::Default(), home_.Join(".aws/" + name), text);
  }
  AwsConfigInputs Inputs() {
    AwsConfigInputs in;
    in.home = home_.path();
    in.getenv = [this](const char* name) -> std::optional<std::string> {
      auto it = env_.find(name);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
    return in;
  }
  AwsConfig Resolve(const AwsConfigInputs& in) {
    Result<AwsConfig> c = ResolveAwsConfig(in);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : AwsConfig{};
  }
  AwsConfig Resolve() { return Resolve(Inputs()); }
  // The error of a resolution that must fail; it never holds a secret.
  Status Failure(const AwsConfigInputs& in) {
    Result<AwsConfig> c = ResolveAwsConfig(in);
    EXPECT_FALSE(c.ok());
    if (c.ok()) return Status::OK();
    std::string msg = c.status().ToString();
    EXPECT_EQ(msg.find(kSecret), std::string::npos) << msg;
    EXPECT_EQ(msg.find(kToken), std::string::npos) << msg;
    EXPECT_EQ(msg.find("AKIAEXAMPLE"), std::string::npos) << msg;
    return c.status();
  }
  Status Failure() { return Failure(Inputs()); }

  test::ScratchDir home_;
  std::map<std::string, std::string> env_;
};

TEST_F(AwsConfigTest, NothingConfiguredAndNoSignGivesTheDefaults) {
  AwsConfigInputs in = Inputs();
  in.no_sign_request = true;
  AwsConfig c = Resolve(in);
  EXPECT_FALSE(c.sign);
  EXPECT_EQ(c.profile, "default");
  EXPECT_EQ(c.region, "us-east-1");
  EXPECT_EQ(c.endpoint_url, "");
  EXPECT_EQ(S3EndpointUrl(c), "https://s3.us-east-1.amazonaws.com");
  EXPECT_EQ(c.addressing, "virtual");
  EXPECT_TRUE(c.addressing_auto);
}

TEST_F(AwsConfigTest, MissingCredentialsSaysHowToFix) {
  Status s = Failure();
  EXPECT_TRUE(s.IsInvalidArgument());
  std::string m(s.message());
  EXPECT_NE(m.find("AWS_ACCESS_KEY_ID"), std::string::npos) << m;
  EXPECT_NE(m.find(home_.Join(".aws/credentials")), std::string::npos) << m;
  EXPECT_NE(m.find("--no-sign-request"), std::string::npos) << m;
}

TEST_F(AwsConfigTest, EnvironmentCredentialsWithSessionToken) {
  env_ = {{"AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"},
          {"AWS_SECRET_ACCESS_KEY", kSecret},
          {"AWS_SESSION_TOKEN", kToken}};
  AwsConfig c = Resolve();
  EXPECT_TRUE(c.sign);
  EXPECT_EQ(c.creds.access_key_id, "AKIAEXAMPLE");
  EXPECT_EQ(c.creds.secret_access_key, kSecret);
  EXPECT_EQ(c.creds.session_token, kToken);
}

TEST_F(AwsConfigTest, KeyIdWithoutSecretIsAnErrorWithoutTheKey) {
  env_ = {{"AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"}};
  EXPECT_NE(Failure().message().find("AWS_SECRET_ACCESS_KEY"),
            std::string_view::npos);
  env_.clear();
  WriteAws("credentials", "[default]\naws_access_key_id = AKIAEXAMPLE\n");
  EXPECT_NE(Failure().message().find("aws_secret_access_key"),
            std::string_view::npos);
}

TEST_F(AwsConfigTest, DefaultProfileFromBothFiles) {
  WriteAws("credentials",
           "# keys\n[default]\naws_access_key_id = AKIAEXAMPLE\n"
           "AWS_Secret_Access_Key=" +
               std::string(kSecret) + "\n");
  WriteAws("config", "[default]\nregion: eu-west-1\n");
  AwsConfig c = Resolve();
  EXPECT_EQ(c.creds.access_key_id, "AKIAEXAMPLE");
  EXPECT_EQ(c.creds.secret_access_key, kSecret);
  EXPECT_EQ(c.creds.session_token, "");
  EXPECT_EQ(c.region, "eu-west-1");
  EXPECT_EQ(S3EndpointUrl(c), "https://s3.eu-west-1.amazonaws.com");
}

TEST_F(AwsConfigTest, NamedProfilesAndWhichCredentialsWin) {
  WriteAws("credentials",
           "[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = "
           "s1\n\n[dev]\naws_access_key_id = AKDEV\naws_secret_access_key = "
           "s2\naws_session_token = t2\n");
  WriteAws("config",
           "[default]\nregion = us-west-1\n[profile dev]\nregion = "
           "ap-south-1\n");
  env_ = {{"AWS_PROFILE", "dev"}};
  AwsConfig c = Resolve();
  EXPECT_EQ(c.profile, "dev");
  EXPECT_EQ(c.creds.access_key_id, "AKDEV");
  EXPECT_EQ(c.creds.session_token, "t2");
  EXPECT_EQ(c.region, "ap-south-1");

  // Keys in the environment win over AWS_PROFILE's ...
  env_["AWS_ACCESS_KEY_ID"] = "AKENV";
  env_["AWS_SECRET_ACCESS_KEY"] = "s3";
  c = Resolve();
  EXPECT_EQ(c.creds.access_key_id, "AKENV");
  EXPECT_EQ(c.region, "ap-south-1");  // the profile still gives the region
  // ... but not over --profile.
  AwsConfigInputs in = Inputs();
  in.profile = "default";
  c = Resolve(in);
  EXPECT_EQ(c.profile, "default");
  EXPECT_EQ(c.creds.access_key_id, "AKDEFAULT");
  EXPECT_EQ(c.region, "us-west-1");
}

TEST_F(AwsConfigTest, UnknownNamedProfileIsAnErrorNamingIt) {
  WriteAws("credentials",
           "[default]\naws_access_key_id = AKIAEXAMPLE\n"
           "aws_secret_access_key = " +
               std::string(kSecret) + "\n");
  AwsConfigInputs in = Inputs();
  in.profile = "nosuch";
  Status s = Failure(in);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("'nosuch'"), std::string_view::npos);
  env_ = {{"AWS_PROFILE", "other"}};
  EXPECT_NE(Failure().message().find("'other'"), std::string_view::npos);
  // Even with --no-sign-request (the CLI refuses it too).
  in = Inputs();
  in.no_sign_request = true;
  EXPECT_TRUE(Failure(in).IsInvalidArgument());
}

TEST_F(AwsConfigTest, EmptySectionInCredentialsFileIsAProfile) {
  // Found by aws_config_oracle.py: the CLI knows profile "prod" from an empty
  // [prod] and takes the keys from the environment.
  WriteAws("credentials", "[prod]\n");
  env_ = {{"AWS_PROFILE", "prod"},
          {"AWS_ACCESS_KEY_ID", "AKENV"},
          {"AWS_SECRET_ACCESS_KEY", "s"}};
  AwsConfig c = Resolve();
  EXPECT_EQ(c.profile, "prod");
  EXPECT_EQ(c.creds.access_key_id, "AKENV");
}

TEST_F(AwsConfigTest, ProfileFromConfigFileOnlyAndQuotedName) {
  WriteAws("config",
           "[profile \"my team\"]\naws_access_key_id = AKTEAM\n"
           "aws_secret_access_key = " +
               std::string(kSecret) + "\nregion = eu-north-1\n");
  AwsConfigInputs in = Inputs();
  in.profile = "my team";
  AwsConfig c = Resolve(in);
  EXPECT_EQ(c.creds.access_key_id, "AKTEAM");
  EXPECT_EQ(c.region, "eu-north-1");
}

TEST_F(AwsConfigTest, CredentialsFileSettingsWinOverConfigFile) {
  WriteAws("credentials",
           "[default]\naws_access_key_id = AK1\n"
           "aws_secret_access_key = s\nregion = us-east-2\n");
  WriteAws("config",
           "[default]\naws_access_key_id = AK2\n"
           "aws_secret_access_key = s\nregion = eu-west-3\n");
  AwsConfig c = Resolve();
  EXPECT_EQ(c.creds.access_key_id, "AK1");
  EXPECT_EQ(c.region, "us-east-2");
}

TEST_F(AwsConfigTest, RegionOrder) {
  WriteAws("config", "[default]\nregion = from-profile\n");
  AwsConfigInputs in = Inputs();
  in.no_sign_request = true;
  EXPECT_EQ(Resolve(in).region, "from-profile");
  env_["AWS_DEFAULT_REGION"] = "from-default-region";
  EXPECT_EQ(Resolve(in).region, "from-default-region");
  env_["AWS_REGION"] = "from-region";
  EXPECT_EQ(Resolve(in).region, "from-region");
  env_["AWS_REGION"] = "";  // empty counts as unset
  EXPECT_EQ(Resolve(in).region, "from-default-region");
  in.region = "from-flag";
  EXPECT_EQ(Resolve(in).region, "from-flag");
}

TEST_F(AwsConfigTest, EndpointOrder) {
  WriteAws("config",
           "[default]\nendpoint_url = http://profile\nservices = local\n"
           "[services local]\ns3 =\n  endpoint_url = http://services-s3\n");
  AwsConfigInputs in = Inputs();
  in.no_sign_request = true;
  EXPECT_EQ(Resolve(in).endpoint_url, "http://services-s3");
  WriteAws("config", "[default]\nendpoint_url = http://profile\n");
  EXPECT_EQ(Resolve(in).endpoint_url, "http://profile");
  WriteAws("config",
           "[default]\nendpoint_url = http://profile\ns3 =\n"
           "  endpoint_url = http://profile-s3\n");
  EXPECT_EQ(Resolve(in).endpoint_url, "http://profile-s3");
  env_["AWS_ENDPOINT_URL"] = "http://env";
  EXPECT_EQ(Resolve(in).endpoint_url, "http://env");
  env_["AWS_ENDPOINT_URL_S3"] = "http://env-s3";
  EXPECT_EQ(Resolve(in).endpoint_url, "http://env-s3");
  in.endpoint_url = "http://flag:9000";
  AwsConfig c = Resolve(in);
  EXPECT_EQ(c.endpoint_url, "http://flag:9000");
  EXPECT_EQ(S3EndpointUrl(c), "http://flag:9000");
  EXPECT_EQ(c.addressing, "path");  // auto with a custom endpoint
  in.endpoint_url.clear();
  env_["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true";
  EXPECT_EQ(Resolve(in).endpoint_url, "");
}

TEST_F(AwsConfigTest, AddressingStyle) {
  WriteAws("config",
           "[default]\ns3 =\n  addressing_style = path\n"
           "  signature_version = s3v4\n");
  AwsConfigInputs in = Inputs();
  in.no_sign_request = true;
  AwsConfig c = Resolve(in);
  EXPECT_EQ(c.addressing, "path");
  EXPECT_FALSE(c.addressing_auto);
  EXPECT_EQ(S3AddressingFor(c, "bucket"), "path");
  in.addressing = "virtual";
  c = Resolve(in);
  EXPECT_EQ(c.addressing, "virtual");
  EXPECT_EQ(S3AddressingFor(c, "my.dotted.bucket"), "virtual");  // as asked
  in.addressing = "auto";
  c = Resolve(in);
  EXPECT_EQ(S3AddressingFor(c, "bucket-1"), "virtual");
  EXPECT_EQ(S3AddressingFor(c, "my.dotted.bucket"), "path");
  EXPECT_EQ(S3AddressingFor(c, "Upper_Case"), "path");
  in.addressing = "sideways";
  Status s = Failure(in);
  EXPECT_NE(s.message().find("sideways"), std::string_view::npos);
}

TEST_F(AwsConfigTest, CaBundleOrder) {
  WriteAws("config", "[default]\nca_bundle = /profile.pem\n");
  AwsConfigInputs in = Inputs();
  in.no_sign_request = true;
  EXPECT_EQ(Resolve(in).ca_bundle, "/profile.pem");
  env_["AWS_CA_BUNDLE"] = "/env.pem";
  EXPECT_EQ(Resolve(in).ca_bundle, "/env.pem");
  in.ca_bundle = "/flag.pem";
  EXPECT_EQ(Resolve(in).ca_bundle, "/flag.pem");
}

TEST_F(AwsConfigTest, FileLocationsFromTheEnvironment) {
  test::WriteFile(Env::Default(), home_.Join("elsewhere/creds"),
                  "[default]\naws_access_key_id = AKELSEWHERE\n"
                  "aws_secret_access_key = s\n");
  test::WriteFile(Env::Default(), home_.Join("elsewhere/conf"),
                  "[default]\nregion = sa-east-1\n");
  WriteAws("credentials",
           "[default]\naws_access_key_id = AKHOME\n"
           "aws_secret_access_key = s\n");
  env_ = {{"AWS_SHARED_CREDENTIALS_FILE", "~/elsewhere/creds"},
          {"AWS_CONFIG_FILE", home_.Join("elsewhere/conf")}};
  AwsConfig c = Resolve();
  EXPECT_EQ(c.creds.access_key_id, "AKELSEWHERE");
  EXPECT_EQ(c.region, "sa-east-1");
}

TEST_F(AwsConfigTest, RoleAndSsoProfilesAreRefusedByName) {
  WriteAws("config",
           "[profile role]\nrole_arn = arn:aws:iam::1:role/x\n"
           "source_profile = default\n[profile sso]\nsso_session = s\n"
           "[profile proc]\ncredential_process = /bin/creds\n");
  for (const char* p : {"role", "sso", "proc"}) {
    AwsConfigInputs in = Inputs();
    in.profile = p;
    Status s = Failure(in);
    EXPECT_EQ(s.code(), Status::Code::kNotSupported) << p;
    EXPECT_NE(s.message().find(std::string("'") + p + "'"),
              std::string_view::npos);
  }
}

TEST_F(AwsConfigTest, SyntaxErrorsNameFileAndLineButNoValue) {
  WriteAws("credentials", "[default]\naws_access_key_id = AKIAEXAMPLE\n" +
                              std::string(kSecret) + "\n");
  Status s = Failure();
  EXPECT_NE(s.message().find(home_.Join(".aws/credentials") + ":3:"),
            std::string_view::npos)
      << s.ToString();
  WriteAws("credentials",
           "[default]\naws_secret_access_key = " + std::string(kSecret) +
               "\naws_secret_access_key = " + kSecret + "\n");
  s = Failure();
  EXPECT_NE(s.message().find(":3: setting 'aws_secret_access_key' repeated"),
            std::string_view::npos)
      << s.ToString();
}

TEST(AwsIni, ParsesTheAwsDialect) {
  Result<IniFile> ini = ParseAwsIni(
      "; comment\n"
      "[default]\n"
      "  # indented comment\n"
      "Region = us-west-2 # not a comment\n"
      "key:value=with=equals\n"
      "s3 =\n"
      "    addressing_style = virtual\n"
      "\n"
      "    Max_Concurrent_Requests=20\n"
      "multi = first\n"
      "  second\n"
      "[profile x]\r\n"
      "region = eu-west-1\r\n",
      "f");
  ASSERT_TRUE(ini.ok()) << ini.status().ToString();
  const IniSection& d = ini->at("default");
  EXPECT_EQ(d.at("region"), "us-west-2 # not a comment");
  EXPECT_EQ(d.at("key"), "value=with=equals");
  EXPECT_EQ(d.at("multi"), "first\nsecond");
  EXPECT_EQ(ini->at("profile x").at("region"), "eu-west-1");
  Result<IniSection> s3 = ParseAwsIniNested(d.at("s3"), "f", "s3");
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ(s3->at("addressing_style"), "virtual");
  EXPECT_EQ(s3->at("Max_Concurrent_Requests"), "20");
  EXPECT_TRUE(ParseAwsIniNested("plain", "f", "k")->empty());
}

TEST(AwsIni, RejectsWhatTheCliRejects) {
  EXPECT_FALSE(ParseAwsIni("key = v\n", "f").ok());  // before any section
  EXPECT_FALSE(ParseAwsIni("[a]\n[a]\n", "f").ok());
  EXPECT_FALSE(ParseAwsIni("[a]\nk = 1\nK = 2\n", "f").ok());
  EXPECT_FALSE(ParseAwsIni("[a]\n= 1\n", "f").ok());
  EXPECT_FALSE(ParseAwsIni("[]\n", "f").ok());
  EXPECT_FALSE(ParseAwsIniNested("\n  no equals", "f", "s3").ok());
}

TEST(RedactHeaderForLog, SecretsAndUserHeadersAreRedacted) {
  for (const char* name :
       {"Authorization", "authorization", "X-Amz-Security-Token", "Cookie",
        "Proxy-Authorization", "set-cookie", "X-Api-Key"})
    EXPECT_EQ(RedactHeaderForLog(name, "secret"), "<redacted>") << name;
  EXPECT_EQ(RedactHeaderForLog("Range", "bytes=0-9"), "bytes=0-9");
  EXPECT_EQ(RedactHeaderForLog("x-amz-date", "20130524T000000Z"),
            "20130524T000000Z");
  std::vector<std::pair<std::string, std::string>> user = {
      {"X-Custom-Token", "abc"}};
  EXPECT_EQ(RedactHeaderForLog("x-custom-token", "abc", user), "<redacted>");
  EXPECT_EQ(RedactHeaderForLog("x-other", "abc", user), "abc");
}

}  // namespace
}  // namespace ferry::remote
