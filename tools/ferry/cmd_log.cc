// ferry log REMOTE: the published versions, HEAD first, back through parents.
#include <cstdio>
#include <ctime>

#include "cli.h"
#include "ferry/json.h"
#include "ferry/publish.h"
#include "remote_options.h"

namespace ferry::cli {
namespace {

struct LogArgs {
  CommonOptions common;
  RemoteOptions remote;
  std::string url;
  std::string ref = "HEAD";
  uint64_t max = 0;
};

std::string Utc(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  char buf[32];
  if (gmtime_r(&tt, &tm) == nullptr ||
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    return std::to_string(t);
  return buf;
}

int RunLog(LogArgs& a) {
  Env* env = Env::Default();
  auto backend = OpenBackend(a.url, a.remote, env);
  if (!backend.ok()) return Fail(backend.status());
  std::string ref =
      a.ref == "HEAD" || a.ref.rfind("tags/", 0) == 0 ? a.ref : "tags/" + a.ref;
  JsonWriter json(stdout);
  if (a.common.json)
    json.BeginObject()
        .Key("command")
        .String("log")
        .Key("remote")
        .String(a.url)
        .Key("versions")
        .BeginArray();
  bool older_removed = false;
  std::vector<std::string> skipped;
  Status s = ListVersions(
      backend->get(), ref, a.max,
      [&](const VersionInfo& v) {
        older_removed = v.has_parent;
        if (a.common.json) {
          json.BeginObject().Key("id").String(v.id.ToHex()).Key("parent");
          if (v.has_parent) {
            json.String(v.parent.ToHex());
          } else {
            json.Null();
          }
          json.Key("created_unix_s")
              .Int(v.created_unix_s)
              .Key("created")
              .String(Utc(v.created_unix_s))
              .Key("files")
              .Uint(v.files)
              .Key("bytes")
              .Uint(v.bytes)
              .Key("message")
              .String(v.message)
              .Key("tags")
              .BeginArray();
          for (const std::string& t : v.tags) json.String(t);
          json.EndArray().EndObject();
          return Status::OK();
        }
        std::string tags;
        for (const std::string& t : v.tags)
          tags += (tags.empty() ? "" : ", ") + Printable(t);
        std::printf(
            "%s  %s  %llu files  %llu bytes%s%s%s%s\n", v.id.ToHex().c_str(),
            Utc(v.created_unix_s).c_str(),
            static_cast<unsigned long long>(v.files),
            static_cast<unsigned long long>(v.bytes), tags.empty() ? "" : "  (",
            tags.c_str(), tags.empty() ? "" : ")",
            v.message.empty() ? "" : ("  " + Printable(v.message)).c_str());
        return Status::OK();
      },
      &skipped);
  // Versions listed without a tag the folder holds but that cannot be read.
  for (const std::string& w : skipped)
    std::fprintf(stderr, "ferry: warning: %s\n", Printable(w).c_str());
  if (!s.ok()) return Fail(s);
  // The walk ended at a version with a parent: a limit, or gc removed it.
  if (a.common.json) {
    json.EndArray().Key("older_versions").Bool(older_removed).EndObject();
    std::fputc('\n', stdout);
  }
  return kExitOk;
}

}  // namespace

Runner RegisterLog(CLI::App* app) {
  auto a = std::make_shared<LogArgs>();
  CLI::App* cmd = app->add_subcommand(
      "log",
      "List the published versions of a remote, newest first: id, time, "
      "files, bytes, tags, message.\n"
      "  ferry log s3://bucket/datasets/cats\n"
      "  ferry log https://cdn.example.com/cats --json");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  cmd->add_option("remote", a->url, "REMOTE")->required();
  cmd->add_option("--ref", a->ref, "Start at HEAD (default) or a tag");
  AddUintOption(cmd, "-n,--max-count", &a->max,
                "Show at most N versions (0: all)", 0, uint64_t{1} << 40);
  return [a] { return RunLog(*a); };
}

}  // namespace ferry::cli
