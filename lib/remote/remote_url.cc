#include "remote/remote_url.h"

#include <cctype>

#include "ferry/remote.h"

namespace ferry::remote {
namespace {

Status BadUrl(std::string_view url, std::string_view why) {
  return Status::InvalidArgument("bad URL '" + std::string(url) + "'",
                                 std::string(why));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoding; nullopt for a '%' not followed by two hex digits or a NUL.
std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool ValidBucket(std::string_view b) {
  if (b.empty() || b.size() > 255) return false;
  for (char c : b) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' &&
        c != '_')
      return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> UrlScheme(std::string_view url) {
  size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  std::string scheme;
  for (size_t i = 0; i < sep; ++i) {
    char c = url[i];
    bool ok = std::isalpha(static_cast<unsigned char>(c)) ||
              (i > 0 && (std::isdigit(static_cast<unsigned char>(c)) ||
                         c == '+' || c == '.' || c == '-'));
    if (!ok) return std::nullopt;  // "dir/x://y" is a path
    scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return scheme;
}

Result<RemoteUrl> ParseRemoteUrl(std::string_view url) {
  RemoteUrl u;
  std::optional<std::string> scheme = UrlScheme(url);
  if (!scheme) {
    if (url.empty()) return BadUrl(url, "empty");
    if (url.find('\0') != std::string_view::npos)
      return BadUrl(url, "contains a NUL");
    u.kind = RemoteUrl::kFile;
    u.path = std::string(url);
    return u;
  }
  std::string_view rest = url.substr(scheme->size() + 3);
  if (*scheme == "file") {
    // file:///abs/path or file://localhost/abs/path; no other host.
    if (rest.substr(0, 9) == "localhost") rest.remove_prefix(9);
    if (rest.empty() || rest.front() != '/')
      return BadUrl(url, "a file URL is file:///absolute/path");
    std::optional<std::string> path = PercentDecode(rest);
    if (!path) return BadUrl(url, "a '%' not followed by two hex digits");
    u.kind = RemoteUrl::kFile;
    u.path = std::move(*path);
    return u;
  }
  if (*scheme == "http" || *scheme == "https") {
    size_t host_end = rest.find_first_of("/?#");
    if (rest.substr(0, host_end).empty()) return BadUrl(url, "no host");
    u.kind = RemoteUrl::kHttp;
    return u;
  }
  if (*scheme == "s3") {
    size_t slash = rest.find('/');
    std::string_view bucket = rest.substr(0, slash);
    if (bucket.empty()) return BadUrl(url, "no bucket (s3://bucket/prefix)");
    if (!ValidBucket(bucket))
      return BadUrl(url, "'" + std::string(bucket) +
                             "' is not a bucket name (letters, digits, '.', "
                             "'-', '_')");
    u.kind = RemoteUrl::kS3;
    u.bucket = std::string(bucket);
    if (slash != std::string_view::npos)
      u.prefix = std::string(rest.substr(slash + 1));
    return u;
  }
  return BadUrl(url, "unknown scheme '" + *scheme +
                         "' (file://, http://, https://, s3:// or a path)");
}

std::string EncodeUrlAsWritten(std::string_view url) {
  static const char kHex[] = "0123456789ABCDEF";
  url = url.substr(0, url.find('#'));
  std::string out;
  out.reserve(url.size());
  for (size_t i = 0; i < url.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(url[i]);
    bool escape = c <= ' ' || c >= 0x7f ||
                  std::string_view("\"<>\\^`{|}").find(static_cast<char>(c)) !=
                      std::string_view::npos;
    if (c == '%')
      escape = i + 2 >= url.size() || HexValue(url[i + 1]) < 0 ||
               HexValue(url[i + 2]) < 0;
    if (!escape) {
      out += static_cast<char>(c);
      continue;
    }
    out += '%';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace ferry::remote

namespace ferry {
namespace {

constexpr std::string_view kUrlEnd = " \t\r\n\"'<>";

bool SecretParam(std::string_view name) {
  std::string n(name);
  for (char& c : n)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::string_view kExact[] = {"sig",  "key",  "pw",
                                                "pass", "code", "jwt"};
  for (std::string_view e : kExact)
    if (n == e) return true;
  static constexpr std::string_view kPart[] = {
      "signature",  "credential", "token",   "secret",  "password",
      "passwd",     "auth",       "api_key", "api-key", "apikey",
      "access_key", "accesskey",  "session"};
  for (std::string_view p : kPart)
    if (n.find(p) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string RedactUrls(std::string_view text) {
  static constexpr std::string_view kRedacted = "<redacted>";
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ':' && text.substr(i, 3) == "://") {
      // userinfo: up to the last '@' of the authority.
      const size_t start = i + 3;
      size_t end = text.find_first_of(std::string(kUrlEnd) + "/?#", start);
      if (end == std::string_view::npos) end = text.size();
      const size_t at = text.substr(start, end - start).rfind('@');
      out += "://";
      if (at != std::string_view::npos) {
        out += kRedacted;
        i = start + at;  // the '@'
      } else {
        i = start;
      }
      continue;
    }
    out += c;
    ++i;
    if (c != '?' && c != '&') continue;
    const size_t eq = text.find_first_of(std::string(kUrlEnd) + "&=#?/", i);
    if (eq == std::string_view::npos || text[eq] != '=' ||
        !SecretParam(text.substr(i, eq - i)))
      continue;
    size_t end = text.find_first_of(std::string(kUrlEnd) + "&#", eq + 1);
    if (end == std::string_view::npos) end = text.size();
    if (end > eq + 1 && text[end - 1] == ':') --end;  // "URL: why" in a message
    out += text.substr(i, eq + 1 - i);
    out += kRedacted;
    i = end;
  }
  return out;
}

}  // namespace ferry
