#include "remote/redirect.h"

#include <curl/curl.h>

#include <cctype>
#include <memory>

namespace ferry::remote {
namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using Url = std::unique_ptr<CURLU, UrlDeleter>;

std::string Part(CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* v = nullptr;
  if (curl_url_get(u, part, &v, flags) != CURLUE_OK || v == nullptr) return "";
  std::string out(v);
  curl_free(v);
  for (char& c : out)
    if (part != CURLUPART_URL) c = char(std::tolower((unsigned char)c));
  return out;
}

// scheme://host:port, lower-cased, the default port written out.
std::string Origin(CURLU* u) {
  return Part(u, CURLUPART_SCHEME) + "://" + Part(u, CURLUPART_HOST) + ":" +
         Part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
}

Result<Url> Parse(std::string_view url, std::string_view what) {
  Url u(curl_url());
  std::string s(url);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, s.c_str(),
                         CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK)
    return Status::IOError(std::string(what), "not a URL");
  return u;
}

}  // namespace

Result<bool> FollowRedirect(std::string_view origin, std::string_view from,
                            const HttpResponse& response,
                            RedirectState* state) {
  long s = response.status;
  if (s != 301 && s != 302 && s != 303 && s != 307 && s != 308) return false;
  const std::string* location = FindHeader(response.headers, "location");
  if (location == nullptr || location->empty()) return false;
  const std::string what =
      RedactUrls(std::string(from)) + ": redirect (" + std::to_string(s) + ")";
  if (state->hops >= kMaxRedirects) {
    return Status::IOError(
        what, "more than " + std::to_string(kMaxRedirects) + " redirects");
  }
  FERRY_ASSIGN_OR_RETURN(Url u, Parse(from, what));
  // Relative Locations are resolved against the URL that answered.
  if (curl_url_set(u.get(), CURLUPART_URL, location->c_str(),
                   CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
    return Status::IOError(
        what, "the Location is not a URL: " + RedactUrls(*location));
  }
  FERRY_ASSIGN_OR_RETURN(Url from_url, Parse(from, what));
  std::string scheme = Part(u.get(), CURLUPART_SCHEME);
  std::string target = Part(u.get(), CURLUPART_URL);
  if (scheme != "http" && scheme != "https") {
    return Status::IOError(
        what, "to a URL that is not http(s): " + RedactUrls(target));
  }
  if (scheme == "http" && Part(from_url.get(), CURLUPART_SCHEME) == "https") {
    return Status::IOError(what,
                           "from https to http refused: " + RedactUrls(target));
  }
  FERRY_ASSIGN_OR_RETURN(Url origin_url, Parse(origin, what));
  state->url = std::move(target);
  state->foreign = Origin(u.get()) != Origin(origin_url.get());
  ++state->hops;
  return true;
}

void ApplyRedirect(const RedirectState& state, HttpRequest* request) {
  if (state.url.empty()) return;
  request->url = state.url;
  request->send_extra_headers = !state.foreign;
}

}  // namespace ferry::remote
