// aws_config_resolve: prints ResolveAwsConfig's answer for the process's
// environment and HOME as one JSON object, for aws_config_oracle.py to
// compare with the AWS CLI's own resolution (awscli's botocore session).
//   aws_config_resolve [--profile P] [--region R] [--endpoint-url U]
//                      [--ca-bundle F] [--s3-addressing S] [--no-sign-request]
// Test credentials only: this prints them.
#include <cstdio>
#include <cstring>
#include <string>

#include "ferry/json.h"
#include "remote/aws_config.h"

int main(int argc, char** argv) {
  ferry::remote::AwsConfigInputs in;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string* target = a == "--profile"         ? &in.profile
                          : a == "--region"        ? &in.region
                          : a == "--endpoint-url"  ? &in.endpoint_url
                          : a == "--ca-bundle"     ? &in.ca_bundle
                          : a == "--s3-addressing" ? &in.addressing
                                                   : nullptr;
    if (target != nullptr && i + 1 < argc) {
      *target = argv[++i];
    } else if (a == "--no-sign-request") {
      in.no_sign_request = true;
    } else {
      std::fprintf(stderr, "aws_config_resolve: bad argument %s\n", argv[i]);
      return 2;
    }
  }
  ferry::Result<ferry::remote::AwsConfig> c =
      ferry::remote::ResolveAwsConfig(in);
  ferry::JsonWriter w;
  w.BeginObject().Key("ok").Bool(c.ok());
  if (!c.ok()) {
    w.Key("code").String(ferry::CodeName(c.status().code()));
    w.Key("message").String(c.status().message());
  } else {
    w.Key("profile").String(c->profile);
    w.Key("sign").Bool(c->sign);
    w.Key("access_key").String(c->creds.access_key_id);
    w.Key("secret_key").String(c->creds.secret_access_key);
    w.Key("token").String(c->creds.session_token);
    w.Key("region").String(c->region);
    w.Key("endpoint_url").String(c->endpoint_url);
    w.Key("ca_bundle").String(c->ca_bundle);
    w.Key("addressing").String(c->addressing_auto ? "auto" : c->addressing);
  }
  w.EndObject();
  std::fputs(w.str().c_str(), stdout);
  std::fputc('\n', stdout);
  return 0;
}
