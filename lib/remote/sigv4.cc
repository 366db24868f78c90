// SigV4 as specified in AWS's "Signature Version 4 signing process" and
// pinned down by the S3 documentation examples (sync.md §11).
#include "remote/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <mutex>

namespace ferry::remote {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr char kHexUpper[] = "0123456789ABCDEF";

std::string ToHex(const unsigned char* p, size_t n) {
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[p[i] >> 4];
    out[2 * i + 1] = kHex[p[i] & 15];
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view msg) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac,
       &len);
  return std::string(reinterpret_cast<char*>(mac), len);
}

// "20130524T000000Z".
std::string AmzDate(std::int64_t unix_time) {
  std::time_t t = static_cast<std::time_t>(unix_time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
// "aws4_request"): four HMACs per (secret, day, region, service), cached as
// the SDKs do. The cache is small and cleared when full (a process talks to
// a handful of regions).
std::string SigningKey(std::string_view secret, std::string_view date,
                       std::string_view region, std::string_view service) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::string id;
  for (std::string_view part : {secret, date, region, service}) {
    id.append(part);
    id.push_back('\0');
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(id);
    if (it != cache.end()) return it->second;
  }
  std::string k = HmacSha256("AWS4" + std::string(secret), date);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  k = HmacSha256(k, "aws4_request");
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 64) cache.clear();
  cache.emplace(std::move(id), k);
  return k;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

// Trimmed, inner whitespace runs collapsed to one space (SigV4 "Trimall";
// it also removes CR/LF, so a value cannot inject a header line).
std::string TrimAll(std::string_view v) {
  std::string out;
  bool pending_space = false;
  for (char c : v) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

bool IsSignerOwned(std::string_view lower_name) {
  return lower_name == "host" || lower_name == "authorization" ||
         lower_name == "x-amz-date" || lower_name == "x-amz-content-sha256" ||
         lower_name == "x-amz-security-token";
}

// Sorted by encoded key, then encoded value (not by "key=value": "a-b=1"
// must sort after "a=1").
std::string CanonicalQuery(
    const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> enc;
  enc.reserve(query.size());
  for (const auto& [k, v] : query)
    enc.emplace_back(AwsUriEncode(k, false), AwsUriEncode(v, false));
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) {
    if (!out.empty()) out.push_back('&');
    out += k;
    out.push_back('=');
    out += v;
  }
  return out;
}

}  // namespace

std::string AwsUriEncode(std::string_view s, bool keep_slash) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                      c == '_' || c == '~' || (c == '/' && keep_slash);
    if (unreserved) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHexUpper[c >> 4]);
      out.push_back(kHexUpper[c & 15]);
    }
  }
  return out;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return ToHex(md, len);
}

SigV4Result SignV4(const SigV4Request& req, const AwsCredentials& creds,
                   std::string_view region, std::string_view service,
                   std::int64_t unix_time) {
  const std::string amz_date = AmzDate(unix_time);
  const std::string date = amz_date.substr(0, 8);
  SigV4Result result;

  // The headers to send, in order; the signer's own last.
  for (const auto& [name, value] : req.headers)
    if (!IsSignerOwned(AsciiLower(name)))
      result.headers.emplace_back(name, TrimAll(value));
  result.headers.emplace_back("x-amz-content-sha256", req.payload_sha256);
  result.headers.emplace_back("x-amz-date", amz_date);
  if (!creds.session_token.empty())
    result.headers.emplace_back("x-amz-security-token", creds.session_token);

  // Canonical headers: lower-case names sorted, repeated names joined by ','
  // in the order given.
  std::map<std::string, std::string> canon;
  canon["host"] = TrimAll(req.host);
  for (const auto& [name, value] : result.headers) {
    auto [it, inserted] = canon.try_emplace(AsciiLower(name), TrimAll(value));
    if (!inserted) it->second += "," + TrimAll(value);
  }
  std::string canonical_headers, signed_headers;
  for (const auto& [name, value] : canon) {
    canonical_headers += name + ":" + value + "\n";
    if (!signed_headers.empty()) signed_headers.push_back(';');
    signed_headers += name;
  }

  std::string path = AwsUriEncode(req.path, true);
  if (path.empty() || path[0] != '/') path.insert(0, "/");
  std::string query = CanonicalQuery(req.query);
  result.url_path_and_query = query.empty() ? path : path + "?" + query;

  std::string canonical_request = req.method + "\n" + path + "\n" + query +
                                  "\n" + canonical_headers + "\n" +
                                  signed_headers + "\n" + req.payload_sha256;
  std::string scope = date + "/" + std::string(region) + "/" +
                      std::string(service) + "/aws4_request";
  std::string string_to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope +
                               "\n" + Sha256Hex(canonical_request);
  std::string key = SigningKey(creds.secret_access_key, date, region, service);
  std::string mac = HmacSha256(key, string_to_sign);
  std::string signature =
      ToHex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  result.headers.emplace_back(
      "Authorization", "AWS4-HMAC-SHA256 Credential=" + creds.access_key_id +
                           "/" + scope + ", SignedHeaders=" + signed_headers +
                           ", Signature=" + signature);
  return result;
}

}  // namespace ferry::remote
