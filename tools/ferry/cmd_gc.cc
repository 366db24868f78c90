// ferry gc REMOTE: delete what no kept version references (docs/sync.md).
#include <cstdio>
#include <string>

#include "cli.h"
#include "ferry/json.h"
#include "ferry/publish.h"
#include "remote_options.h"

namespace ferry::cli {
namespace {

struct GcArgs {
  CommonOptions common;
  RemoteOptions remote;
  std::string url;
  std::string grace = "24h";
  GcOptions gc;
};

// "90", "90s", "15m", "24h", "7d" -> seconds.
Result<int64_t> ParseDuration(std::string_view text) {
  int64_t unit = 1;
  std::string_view digits = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      default:
        unit = 0;
    }
    if (unit != 0) digits.remove_suffix(1);
    if (unit == 0) unit = 1;
  }
  // The bound is on the duration, not on its digits: 999999d was taken
  // and overflowed gc's cutoff into the future (everything "old").
  auto n = ParseUint(digits, "--grace", 0, uint64_t(kMaxGraceS) / unit);
  if (!n.ok())
    return Status::InvalidArgument(
        "--grace",
        "takes a duration such as 90s, 15m, 24h or 7d, at most 100 years");
  return static_cast<int64_t>(*n) * unit;
}

int RunGc(GcArgs& a) {
  auto grace = ParseDuration(a.grace);
  if (!grace.ok()) return Fail(grace.status());
  a.gc.grace_s = *grace;
  Env* env = Env::Default();
  auto backend = OpenBackend(a.url, a.remote, env);
  if (!backend.ok()) return Fail(backend.status());
  const bool list = a.common.verbose || a.gc.dry_run;
  a.gc.deleted = [&](std::string_view key, uint64_t size) {
    if (list && !a.common.json)
      std::printf(
          "%s %s (%llu bytes)\n", a.gc.dry_run ? "would delete" : "deleted",
          Printable(key).c_str(), static_cast<unsigned long long>(size));
  };
  GcReport r;
  const Status s = CollectGarbage(backend->get(), a.gc, env, &r);
  // A run that stopped while deleting still says what it deleted (the
  // error names what failed); one that stopped before deleted nothing.
  const bool counts = s.ok() || r.sweeping;
  if (a.common.json && counts) {
    JsonWriter w(stdout);
    w.BeginObject()
        .Key("command")
        .String("gc")
        .Key("remote")
        .String(a.url)
        .Key("dry_run")
        .Bool(a.gc.dry_run)
        .Key("versions_kept")
        .Uint(r.versions_kept)
        .Key("objects_kept")
        .Uint(r.objects_kept)
        .Key("objects_deleted")
        .Uint(r.objects_deleted)
        .Key("bytes_deleted")
        .Uint(r.bytes_deleted)
        .Key("manifests_deleted")
        .Uint(r.manifests_deleted)
        .Key("packs_kept")
        .Uint(r.packs_kept)
        .Key("packs_deleted")
        .Uint(r.packs_deleted)
        .Key("young_kept")
        .Uint(r.young_kept)
        .Key("already_gone")
        .Uint(r.already_gone)
        .Key("sigs_deleted")
        .Uint(r.sigs_deleted)
        .Key("deltas_deleted")
        .Uint(r.deltas_deleted)
        .Key("temps_deleted")
        .Uint(r.temps_deleted)
        .Key("uploads_aborted")
        .Uint(r.uploads_aborted);
    if (!r.uploads_note.empty()) w.Key("uploads_note").String(r.uploads_note);
    if (!s.ok()) w.Key("error").String(RedactUrls(s.ToString()));
    w.EndObject();
    std::fputc('\n', stdout);
  } else if (!a.common.quiet && counts) {
    const char* verb = a.gc.dry_run ? "would delete" : "deleted";
    // Packs only where there are any (a bucket published --no-packs, or
    // before packs, reads as it did).
    auto packs = [](uint64_t n, const char* sep) {
      return n == 0 ? std::string()
                    : sep + std::to_string(n) + (n == 1 ? " pack" : " packs");
    };
    std::printf(
        "%s: %skept %llu versions (%llu objects%s); %s %llu objects%s (%llu "
        "bytes) and %llu manifests; %llu unreferenced younger than %s kept\n",
        Printable(a.url).c_str(), s.ok() ? "" : "stopped by an error: ",
        static_cast<unsigned long long>(r.versions_kept),
        static_cast<unsigned long long>(r.objects_kept),
        packs(r.packs_kept, ", ").c_str(), verb,
        static_cast<unsigned long long>(r.objects_deleted),
        packs(r.packs_deleted, " and ").c_str(),
        static_cast<unsigned long long>(r.bytes_deleted),
        static_cast<unsigned long long>(r.manifests_deleted),
        static_cast<unsigned long long>(r.young_kept),
        Printable(a.grace).c_str());
    if (r.already_gone > 0)
      std::printf(
          "%llu were gone when deleted (another gc running at the same "
          "time)\n",
          static_cast<unsigned long long>(r.already_gone));
    if (r.temps_deleted > 0)
      std::printf("%s %llu temporary files killed uploads left\n", verb,
                  static_cast<unsigned long long>(r.temps_deleted));
    if (r.uploads_aborted > 0)
      std::printf("%s %llu incomplete multipart uploads killed runs left\n",
                  a.gc.dry_run ? "would abort" : "aborted",
                  static_cast<unsigned long long>(r.uploads_aborted));
  }
  if (!r.uploads_note.empty() && !a.common.quiet)
    std::fprintf(stderr, "ferry gc: note: incomplete multipart uploads %s\n",
                 Printable(r.uploads_note).c_str());
  if (!s.ok()) return Fail(s);
  return kExitOk;
}

}  // namespace

Runner RegisterGc(CLI::App* app) {
  auto a = std::make_shared<GcArgs>();
  CLI::App* cmd = app->add_subcommand(
      "gc",
      "Delete the objects and manifests of a published remote that no kept "
      "version references (the last --keep from HEAD and every tagged one) "
      "and that are older than --grace.\n"
      "  ferry gc s3://bucket/datasets/cats --keep 5\n"
      "  ferry gc file:///mnt/share/cats --grace 1h --dry-run");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  cmd->add_option("remote", a->url, "REMOTE")->required();
  AddUintOption(cmd, "--keep", &a->gc.keep,
                "Versions to keep from HEAD back (tagged ones are kept too)", 1,
                uint64_t{1} << 40);
  cmd->add_option("--grace", a->grace,
                  "Never delete anything younger (a publish running now "
                  "uploads objects before it references them); default 24h")
      ->type_name("DURATION");
  cmd->add_flag("--dry-run", a->gc.dry_run, "List what would be deleted");
  return [a] { return RunGc(*a); };
}

}  // namespace ferry::cli
