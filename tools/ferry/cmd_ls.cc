// ferry ls: list a remote (s3://, file://, a folder) as it streams in.
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "cli.h"
#include "ferry/json.h"
#include "ferry/remote.h"
#include "remote_options.h"
#include "transfer_cli.h"

namespace ferry::cli {
namespace {

struct LsArgs {
  CommonOptions common;
  RemoteOptions remote;
  std::string url;
  bool long_format = false, recursive = false;
};

std::string IsoTime(int64_t ns) {
  if (ns <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The key "" is the object the URL itself names: shown by its last part.
std::string Shown(const ObjectInfo& o, const std::string& url) {
  if (!o.key.empty()) return o.key;
  std::string_view u(url);
  while (u.size() > 1 && u.back() == '/') u.remove_suffix(1);
  return std::string(u.substr(u.rfind('/') + 1));
}

int RunLs(const LsArgs& a) {
  auto backend = OpenBackend(a.url, a.remote, Env::Default());
  if (!backend.ok()) return Fail(backend.status());
  uint64_t objects = 0, folders = 0, bytes = 0;
  std::unique_ptr<JsonWriter> json;
  if (a.common.json) {
    json = std::make_unique<JsonWriter>(stdout);
    json->BeginObject().Key("command").String("ls").Key("url").String(
        RedactUrls(a.url));
    json->Key("entries").BeginArray();
  }
  auto print = [&](const ObjectInfo& o) {
    o.is_prefix ? ++folders : ++objects;
    bytes += o.size;
    const std::string key = Shown(o, a.url);
    if (json) {
      json->BeginObject().Key("key").String(key);
      if (o.is_prefix) {
        json->Key("folder").Bool(true);
      } else {
        json->Key("size").Uint(o.size).Key("etag").String(o.etag);
        json->Key("mtime").String(IsoTime(o.mtime_ns));
      }
      json->EndObject();
    } else if (a.long_format) {
      if (o.is_prefix) {
        std::printf("%14s  %-20s  %-34s  %s\n", "-", "-", "-",
                    Printable(key).c_str());
      } else {
        std::printf("%14llu  %-20s  %-34s  %s\n", (unsigned long long)o.size,
                    IsoTime(o.mtime_ns).c_str(),
                    o.etag.empty() ? "-" : Printable(o.etag).c_str(),
                    Printable(key).c_str());
      }
    } else {
      std::printf("%s\n", Printable(key).c_str());
    }
    return Status::OK();
  };
  ListOptions lo;
  lo.recursive = a.recursive;
  SourceProblems problems(a.common.quiet);
  lo.problem = [&](const std::string& key, const Status& why) {
    // The URL itself (key ""), a FIFO or a dangling link: asked for by
    // name, so a failure naming it, not a note.
    if (key.empty()) {
      problems.failures.emplace_back(a.url, why);
    } else {
      problems.Add(key, why);
    }
  };
  Status s = (*backend)->List("", lo, print);
  // Nothing listed: a URL naming one object (s3://bucket/data/file.bin)
  // lists that object; a name that is not there is an error (a FIFO or a
  // dangling link the URL names is a failure already).
  if (s.ok() && objects + folders == 0) {
    auto one =
        EmptyListingNames(backend->get(), a.url, !problems.failures.empty());
    if (!one.ok()) {
      s = one.status();
    } else if (*one) {
      s = print(**one);
    }
  }
  if (json) {
    json->EndArray().Key("objects").Uint(objects).Key("folders").Uint(folders);
    json->Key("bytes").Uint(bytes);
    if (!s.ok()) json->Key("error").String(RedactUrls(s.ToString()));
    json->Key("failures").BeginArray();
    for (const auto& [key, why] : problems.failures) {
      json->BeginObject().Key("key").String(RedactUrls(key));
      json->Key("error").String(RedactUrls(why.ToString())).EndObject();
    }
    json->EndArray();
    json->EndObject();
    std::printf("\n");
  }
  if (!s.ok()) return Fail(s);
  const int rc = ReportFailures(problems.failures);
  if (a.common.verbose && !a.common.json) {
    std::fprintf(stderr, "ferry ls: %llu objects, %llu bytes, %llu folders\n",
                 (unsigned long long)objects, (unsigned long long)bytes,
                 (unsigned long long)folders);
  }
  return rc;
}

}  // namespace

Runner RegisterLs(CLI::App* app) {
  auto a = std::make_shared<LsArgs>();
  CLI::App* cmd = app->add_subcommand(
      "ls", "List the objects of a remote (s3://, file://, a folder)");
  cmd->footer(
      "Examples:\n"
      "  ferry ls s3://bucket/datasets/           # one level: keys and "
      "folders/\n"
      "  ferry ls -R -l s3://bucket/datasets/     # every key: size, mtime "
      "(UTC), ETag\n"
      "  ferry ls --json -R file:///srv/shards    # JSON on stdout\n"
      "  ferry ls --endpoint-url http://127.0.0.1:9000 s3://bucket/\n"
      "Keys are relative to the URL; in keys and ETags, control bytes and "
      "bytes that are not UTF-8 print as \\xHH, '\\' as \\\\.\n"
      "Exit 0 when listed (an empty folder too), 2 for a bad URL or option, "
      "4 when the remote failed or the URL names nothing (the message names "
      "the bucket or key).");
  cmd->add_option("url", a->url, "s3://bucket/prefix, file:///path or a path")
      ->required();
  cmd->add_flag("-l,--long", a->long_format, "Size, mtime, ETag and key");
  cmd->add_flag("-R,--recursive", a->recursive,
                "Every key below the URL, not one level");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  return [a] { return RunLs(*a); };
}

}  // namespace ferry::cli
