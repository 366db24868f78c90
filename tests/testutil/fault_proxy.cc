#include "testutil/fault_proxy.h"

#include <curl/curl.h>

#include <utility>

#include "ferry/json.h"
#include "testutil/test_servers.h"

namespace ferry::test {

namespace {

FaultRule Make(const char* action) {
  FaultRule r;
  r.action = action;
  return r;
}

size_t Append(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

}  // namespace

FaultRule FaultRule::Reset(int64_t bytes) {
  FaultRule r = Make("reset");
  r.bytes = bytes;
  return r;
}

FaultRule FaultRule::Stall(int64_t bytes, double seconds, bool then_close) {
  FaultRule r = Make("stall");
  r.bytes = bytes;
  r.seconds = seconds;
  r.then_close = then_close;
  return r;
}

FaultRule FaultRule::Throttle(int64_t rate) {
  FaultRule r = Make("throttle");
  r.rate = rate;
  return r;
}

FaultRule FaultRule::Respond(int status, int retry_after) {
  FaultRule r = Make("status");
  r.status = status;
  r.retry_after = retry_after;
  return r;
}

FaultRule FaultRule::IgnoreRange() { return Make("ignore_range"); }
FaultRule FaultRule::FirstRangeOnly(int64_t total_delta) {
  FaultRule r = Make("first_range");
  r.total_delta = total_delta;
  return r;
}
FaultRule FaultRule::ShortPart() { return Make("short_part"); }

FaultRule FaultRule::ShortBody(int64_t bytes) {
  FaultRule r = Make("short_body");
  r.bytes = bytes;
  return r;
}

FaultRule FaultRule::WrongContentRange() { return Make("wrong_content_range"); }

FaultRule FaultRule::Flip(int64_t bytes) {
  FaultRule r = Make("flip");
  r.bytes = bytes;
  return r;
}

FaultRule FaultRule::MutateFile(std::string file) {
  FaultRule r = Make("mutate");
  r.file = std::move(file);
  return r;
}

FaultRule FaultRule::MutateCommand(std::string command) {
  FaultRule r = Make("mutate");
  r.command = std::move(command);
  return r;
}

FaultRule FaultRule::MutatePut(std::string url, std::string content) {
  FaultRule r = Make("mutate");
  r.put_url = std::move(url);
  r.content = std::move(content);
  return r;
}

std::string FaultRule::ToJson() const {
  JsonWriter w;
  w.BeginObject().Key("action").String(action);
  if (!method.empty()) w.Key("method").String(method);
  if (!path.empty()) w.Key("path").String(path);
  if (range_only) w.Key("range_only").Bool(true);
  if (multi_range_only) w.Key("multi_range_only").Bool(true);
  if (range_start >= 0) w.Key("range_start").Int(range_start);
  if (star_total) w.Key("star_total").Bool(true);
  if (total_delta != 0) w.Key("total_delta").Int(total_delta);
  w.Key("nth").Int(nth).Key("times").Int(times).Key("bytes").Int(bytes);
  if (seconds > 0) w.Key("seconds").Double(seconds);
  if (rate > 0) w.Key("rate").Int(rate);
  if (then_close) w.Key("then").String("close");
  if (status != 0) w.Key("status").Int(status);
  if (retry_after >= 0) w.Key("retry_after").Int(retry_after);
  if (!code.empty()) w.Key("code").String(code);
  if (!content_range.empty()) w.Key("content_range").String(content_range);
  if (!command.empty()) w.Key("command").String(command);
  if (!file.empty()) w.Key("file").String(file);
  if (content) w.Key("content").String(*content);
  if (!put_url.empty()) w.Key("put_url").String(put_url);
  w.EndObject();
  return w.str();
}

Result<FaultProxy> FaultProxy::FromEnv(Target target) {
  FERRY_ASSIGN_OR_RETURN(TestServers s, TestServers::FromEnv());
  FaultProxy p = target == kHttp
                     ? FaultProxy(s.fault_http_url, s.fault_http_control)
                     : FaultProxy(s.fault_s3_url, s.fault_s3_control);
  if (p.url_.empty() || p.control_.empty()) {
    return ferry::Status::NotFound("no fault proxy in the servers env file");
  }
  return p;
}

Result<std::string> FaultProxy::Call(const std::string& method,
                                     const std::string& path,
                                     const std::string& body) {
  const std::string url = control_ + path;
  std::string out;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  if (method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(body.size()));
  }
  CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) {
    return ferry::Status::IOError(url, curl_easy_strerror(rc));
  }
  if (status != 200) {
    return ferry::Status::InvalidArgument(url, out);
  }
  return out;
}

Result<int> FaultProxy::Add(const FaultRule& rule) {
  FERRY_ASSIGN_OR_RETURN(std::string reply,
                         Call("POST", "/rule", rule.ToJson()));
  FERRY_ASSIGN_OR_RETURN(JsonValue v, ParseJson(reply));
  return static_cast<int>(v["id"].uint());
}

ferry::Status FaultProxy::Reset() {
  return Call("POST", "/__reset", "").status();
}

Result<FaultStats> FaultProxy::Stats() {
  FERRY_ASSIGN_OR_RETURN(std::string reply, Call("GET", "/__stats", ""));
  FERRY_ASSIGN_OR_RETURN(JsonValue v, ParseJson(reply));
  FaultStats s;
  s.requests = static_cast<int64_t>(v["requests"].uint());
  s.faults = static_cast<int64_t>(v["faults"].uint());
  s.connections = static_cast<int64_t>(v["connections"].uint());
  for (const auto& [path, p] : v["paths"].members()) {
    s.paths[path] = {static_cast<int64_t>(p["requests"].uint()),
                     static_cast<int64_t>(p["bytes_sent"].uint())};
  }
  return s;
}

}  // namespace ferry::test
