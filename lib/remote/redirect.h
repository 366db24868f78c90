// HTTP redirects of http(s):// remotes, followed by ferry itself (private to
// lib/remote; docs/remote.md "Redirects"), never by libcurl: so that a
// redirect is judged like any answer, its hops counted, a downgrade from
// https refused, and --header values (tokens) kept from other origins.
#ifndef FERRY_LIB_REMOTE_REDIRECT_H_
#define FERRY_LIB_REMOTE_REDIRECT_H_

#include <optional>
#include <string>
#include <string_view>

#include "ferry/result.h"
#include "remote/http.h"

namespace ferry::remote {

constexpr int kMaxRedirects = 10;

// Where a request goes after the redirects met so far.
struct RedirectState {
  std::string url;       // "" until the first redirect
  int hops = 0;          // redirects followed
  bool foreign = false;  // url's origin is not the original's: no --header
};

// When response is a redirect (301, 302, 303, 307 or 308 with a Location),
// moves *state to its target and returns true; false for any other answer.
// `from` is the URL the answer came for, `origin` the URL first asked (its
// scheme, host and port are the origin --header values may go to). IOError
// (not retried) for a Location that is not an http(s) URL, an https -> http
// redirect, and more than kMaxRedirects hops.
Result<bool> FollowRedirect(std::string_view origin, std::string_view from,
                            const HttpResponse& response, RedirectState* state);

// Applies state to a request built for the original URL.
void ApplyRedirect(const RedirectState& state, HttpRequest* request);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_REDIRECT_H_
