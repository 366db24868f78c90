#include "remote_options.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli.h"

namespace ferry::cli {
namespace {

// "Name: value" with a token name (RFC 9110) and no line break anywhere.
bool ValidHeaderLine(std::string_view line) {
  size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos) return false;
  for (char c : line.substr(0, colon)) {
    if (c <= ' ' || c >= 127 ||
        std::string_view("\"(),/:;<=>?@[\\]{}").find(c) !=
            std::string_view::npos)
      return false;
  }
  return line.find_first_of("\r\n") == std::string_view::npos;
}

// A flag whose value is a byte count; usage error (exit 2) when it does not
// parse.
void AddSizeOption(CLI::App* cmd, const std::string& flag, uint64_t* value,
                   const std::string& help, uint64_t lo, uint64_t hi) {
  cmd->add_option_function<std::string>(
         flag,
         [value, flag, lo, hi](const std::string& text) {
           auto v = ParseByteSize(text, flag, lo, hi);
           if (!v.ok())
             throw CLI::ValidationError(std::string(v.status().message()));
           *value = *v;
         },
         help)
      ->type_name("SIZE")
      ->default_str(std::to_string(*value));
}

void PrintRequestLine(std::string_view line) {
  std::fprintf(stderr, "ferry: %s\n", Printable(line).c_str());
}

}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text, std::string_view name,
                               uint64_t lo, uint64_t hi) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  std::string unit(text.substr(digits));
  for (char& c : unit) c = static_cast<char>(std::toupper(c));
  int shift = -1;
  static constexpr std::string_view kUnits = "KMGT";
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (size_t u = kUnits.find(unit[0]); u != std::string_view::npos) {
    std::string_view rest = std::string_view(unit).substr(1);
    if (rest.empty() || rest == "B" || rest == "IB") shift = 10 * int(u + 1);
  }
  auto bad = [&] {
    return Status::InvalidArgument(
        std::string(name) + ": '" + std::string(text) +
        "' is not a size (digits with an optional unit K, M, G or T, "
        "e.g. 8M or 64MiB)");
  };
  if (digits == 0 || shift < 0) return bad();
  auto n = ParseUint(text.substr(0, digits), name, 0, UINT64_MAX);
  if (!n.ok()) return bad();
  uint64_t v = *n;
  const bool overflow = shift > 0 && v > (UINT64_MAX >> shift);  // >= 2^64
  if (!overflow) v <<= shift;
  if (overflow || v < lo || v > hi) {
    return Status::InvalidArgument(
        std::string(name) + ": " + std::string(text) + " is out of range (" +
        std::to_string(lo) + " to " + std::to_string(hi) + " bytes)");
  }
  return v;
}

void AddRemoteOptions(CLI::App* cmd, RemoteOptions* o) {
  const std::string s3 = "S3 and HTTP(S) remotes";
  cmd->add_option("--endpoint-url", o->endpoint_url,
                  "S3 endpoint, e.g. http://127.0.0.1:9000 (default: "
                  "AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, ~/.aws/config, AWS)")
      ->group(s3);
  cmd->add_option("--region", o->region,
                  "S3 region (default: AWS_REGION, AWS_DEFAULT_REGION, "
                  "~/.aws/config, us-east-1)")
      ->group(s3);
  cmd->add_option("--profile", o->profile,
                  "Profile in ~/.aws/credentials and ~/.aws/config "
                  "(default: AWS_PROFILE, default)")
      ->group(s3);
  cmd->add_option("--ca-bundle", o->ca_bundle,
                  "PEM file of CAs to trust for HTTPS (default: AWS_CA_BUNDLE, "
                  "the system store)")
      ->group(s3);
  cmd->add_option("--s3-addressing", o->addressing,
                  "path (http://host/bucket/key), virtual "
                  "(http://bucket.host/key) or auto (default)")
      ->check(CLI::IsMember({"path", "virtual", "auto"}))
      ->group(s3);
  cmd->add_flag("--no-sign-request", o->no_sign_request,
                "Send S3 requests unsigned (public buckets)")
      ->group(s3);
  cmd->add_option("--header", o->headers,
                  "'Name: value' sent with every HTTP(S) request (repeatable; "
                  "never printed)")
      ->check(CLI::Validator(
          [](std::string& line) {
            return ValidHeaderLine(line)
                       ? std::string()
                       : "--header wants 'Name: value' (a valid header name, "
                         "no line breaks)";
          },
          "'NAME: VALUE'"))
      ->type_name("'NAME: VALUE'")
      ->group(s3);

  const std::string tr = "Transfers";
  AddUintOption(cmd, "--connections", &o->connections,
                "Requests in flight, all objects together", 1, 1024)
      ->group(tr);
  AddSizeOption(cmd, "--part-size", &o->part_size,
                "Objects above it move as parallel parts of this size "
                "(8M, 64MiB, ...)",
                uint64_t{1} << 10, uint64_t{5} << 30);
  cmd->get_option("--part-size")->group(tr);
  AddSizeOption(cmd, "--bwlimit", &o->bwlimit,
                "Bytes per second over all transfers, e.g. 50M; 0: no limit", 0,
                UINT64_MAX);
  cmd->get_option("--bwlimit")->group(tr)->default_str("0");
  AddUintOption(cmd, "--retries", &o->max_retries,
                "Retries of a failed request (backoff with jitter)", 0, 100)
      ->group(tr);

  // -v: the request log. Commands with the common options already have -v.
  CLI::Option* verbose = cmd->get_option_no_throw("--verbose");
  if (verbose == nullptr)
    verbose =
        cmd->add_flag("-v,--verbose")
            ->description(
                "Print each request (method, URL, status; secrets redacted)");
  cmd->parse_complete_callback([o, verbose] {
    if (verbose->count() > 0) o->log = PrintRequestLine;
    // For tests of a dead endpoint (tests/cli/unreachable_test.sh).
    if (const char* ms = std::getenv("FERRY_TEST_UNREACHABLE_MS"); ms && *ms)
      o->unreachable_ms = std::strtoull(ms, nullptr, 10);
  });
}

}  // namespace ferry::cli
