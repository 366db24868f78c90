// sigv4_sign: signs requests read as JSON lines on stdin and prints, per
// line, {"url": path_and_query, "headers": [[name, value], ...]} — the
// oracle test (sigv4_botocore_oracle.py) compares it with botocore.
//
// Input line: {"method", "host", "path", "query": [[k, v]...],
// "headers": [[n, v]...], "payload", "access_key", "secret", "token",
// "region", "service", "time"}. Strings are JSON; bytes that are not UTF-8
// come as "\udc80".."\udcff" (Python's surrogateescape).
#include <cstdio>
#include <iostream>
#include <string>

#include "ferry/json.h"
#include "remote/sigv4.h"

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs ReadPairs(const ferry::JsonValue& v) {
  Pairs out;
  for (const ferry::JsonValue& p : v.items())
    out.emplace_back(p.items().at(0).str(), p.items().at(1).str());
  return out;
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    ferry::Result<ferry::JsonValue> doc = ferry::ParseJson(line);
    if (!doc.ok()) {
      std::fprintf(stderr, "sigv4_sign: %s\n", doc.status().ToString().c_str());
      return 2;
    }
    const ferry::JsonValue& j = *doc;
    ferry::remote::SigV4Request req;
    req.method = j["method"].str();
    req.host = j["host"].str();
    req.path = j["path"].str();
    req.query = ReadPairs(j["query"]);
    req.headers = ReadPairs(j["headers"]);
    req.payload_sha256 = j["payload"].str();
    ferry::remote::AwsCredentials creds{j["access_key"].str(),
                                        j["secret"].str(), j["token"].str()};
    ferry::remote::SigV4Result r =
        ferry::remote::SignV4(req, creds, j["region"].str(), j["service"].str(),
                              static_cast<std::int64_t>(j["time"].uint()));
    ferry::JsonWriter w;
    w.BeginObject().Key("url").String(r.url_path_and_query).Key("headers");
    w.BeginArray();
    for (const auto& [n, v] : r.headers)
      w.BeginArray().String(n).String(v).EndArray();
    w.EndArray().EndObject();
    std::string out = w.str();
    if (out.empty() || out.back() != '\n') out.push_back('\n');
    std::cout << out;
  }
  return 0;
}
