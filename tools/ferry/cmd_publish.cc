// ferry publish SRC REMOTE: a new version of a dataset in a bucket
// (docs/sync.md): objects the remote lacks, the manifest, then HEAD.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli.h"
#include "ferry/env.h"
#include "ferry/json.h"
#include "ferry/publish.h"
#include "remote_options.h"
#include "transfer_cli.h"

namespace ferry::cli {
namespace {

struct PublishArgs {
  CommonOptions common;
  RemoteOptions remote;
  std::string src, url;
  PathFilters filters;
  PublishOptions publish;
  bool no_packs = false;
};

// Tests race two publishers here: FERRY_TEST_PUBLISH_PAUSE=<file> makes
// publish wait (up to 60 s) until <file> exists before it writes HEAD.
void TestPause() {
  const char* path = std::getenv("FERRY_TEST_PUBLISH_PAUSE");
  if (path == nullptr || *path == '\0') return;
  for (int i = 0; i < 600 && !Env::Default()->FileExists(path); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

void PrintJson(const PublishArgs& a, const PublishReport& r, double secs) {
  JsonWriter w(stdout);
  w.BeginObject()
      .Key("command")
      .String("publish")
      .Key("remote")
      .String(a.url)
      .Key("id")
      .String(r.id.ToHex())
      .Key("parent");
  if (r.has_parent) {
    w.String(r.parent.ToHex());
  } else {
    w.Null();
  }
  w.Key("unchanged")
      .Bool(r.unchanged)
      .Key("dry_run")
      .Bool(r.dry_run)
      .Key("files")
      .Uint(r.files)
      .Key("bytes")
      .Uint(r.bytes)
      .Key("files_read")
      .Uint(r.files_read)
      .Key("bytes_read")
      .Uint(r.bytes_read)
      .Key("skipped")
      .Uint(r.skipped)
      .Key("objects_uploaded")
      .Uint(r.objects_uploaded)
      .Key("bytes_uploaded")
      .Uint(r.bytes_uploaded)
      .Key("objects_present")
      .Uint(r.objects_present)
      .Key("objects_packed")
      .Uint(r.objects_packed)
      .Key("packs_uploaded")
      .Uint(r.packs_uploaded)
      .Key("manifest_bytes")
      .Uint(r.manifest_bytes)
      .Key("signatures_uploaded")
      .Uint(r.signatures_uploaded)
      .Key("deltas_uploaded")
      .Uint(r.deltas_uploaded)
      .Key("delta_bytes")
      .Uint(r.delta_bytes)
      .Key("deltas_dropped")
      .Uint(r.deltas_dropped)
      .Key("deltas_refined")
      .Uint(r.deltas_refined)
      .Key("delta_literal_bytes_saved")
      .Uint(r.delta_literal_bytes_saved)
      .Key("delta_refine_bytes_read")
      .Uint(r.delta_refine_bytes_read)
      .Key("delta_refine_requests")
      .Uint(r.delta_refine_requests)
      .Key("ref_write")
      .String(r.ref_conditional ? "conditional" : "checked")
      .Key("tag");
  if (a.publish.tag.empty()) {
    w.Null();
  } else {
    w.String(a.publish.tag);
  }
  w.Key("tag_moved")
      .Bool(r.tag_moved)
      .Key("mirrored")
      .Uint(r.mirrored)
      .Key("mirror_deleted")
      .Uint(r.mirror_deleted)
      .Key("seconds")
      .Double(secs)
      .EndObject();
  std::fputc('\n', stdout);
}

void PrintText(const PublishArgs& a, const PublishReport& r) {
  if (a.common.quiet) return;
  const char* would = r.dry_run ? "would be " : "";
  if (r.unchanged) {
    std::printf(
        "%s: nothing to publish: the tree equals HEAD %s (%llu files)\n",
        Printable(a.url).c_str(), r.id.ToHex().c_str(),
        static_cast<unsigned long long>(r.files));
  } else {
    std::printf(
        "%s: version %s %spublished (parent %s): %llu files, %llu bytes; "
        "%llu objects %suploaded (%llu bytes; %llu of them in %llu packs), "
        "%llu already there\n",
        Printable(a.url).c_str(), r.id.ToHex().c_str(), would,
        r.has_parent ? r.parent.ToHex().c_str() : "none",
        static_cast<unsigned long long>(r.files),
        static_cast<unsigned long long>(r.bytes),
        static_cast<unsigned long long>(r.objects_uploaded), would,
        static_cast<unsigned long long>(r.bytes_uploaded),
        static_cast<unsigned long long>(r.objects_packed),
        static_cast<unsigned long long>(r.packs_uploaded),
        static_cast<unsigned long long>(r.objects_present));
  }
  std::printf(
      "read %llu files (%llu bytes); the stat cache answered for %llu\n",
      static_cast<unsigned long long>(r.files_read),
      static_cast<unsigned long long>(r.bytes_read),
      static_cast<unsigned long long>(r.files - r.files_read));
  if (!a.publish.tag.empty())
    std::printf("tag %s %s%s\n", Printable(a.publish.tag).c_str(), would,
                r.tag_moved ? "moved here" : "set");
  if (a.publish.mirror)
    std::printf("mirror: %llu files %swritten, %llu %sdeleted\n",
                static_cast<unsigned long long>(r.mirrored), would,
                static_cast<unsigned long long>(r.mirror_deleted), would);
  if (!r.unchanged && !r.dry_run && !r.ref_conditional)
    std::fprintf(stderr,
                 "ferry: note: %s does not promise conditional writes: HEAD "
                 "was checked just before it was written (a publisher "
                 "racing within that moment could still be overwritten)\n",
                 Printable(a.url).c_str());
}

int RunPublish(PublishArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  Env* env = Env::Default();
  auto backend = OpenBackend(a.url, a.remote, env);
  if (!backend.ok()) return Fail(backend.status());
  PublishOptions& o = a.publish;
  o.part_size = a.remote.part_size;
  o.packs = !a.no_packs;
  o.jobs = a.common.ResolvedJobs();
  o.transfer = TransferOptionsFrom(a.remote, false);
  const bool quiet = a.common.quiet || a.common.json;
  o.note = [quiet](std::string_view msg) {
    if (!quiet) std::fprintf(stderr, "ferry: %s\n", Printable(msg).c_str());
  };
  o.before_ref_write = TestPause;
  // As put -R: the --include/--exclude order rules (the scan itself skips
  // ferry's own working files: IsFerryWorkingFile).
  o.take = [&a](std::string_view path) { return a.filters.Takes(path); };
  std::unique_ptr<TransferBar> bar;
  o.transfer.progress = [&](const TransferProgress& p) {
    if (!bar)
      bar = std::make_unique<TransferBar>("publish", p.files_total, quiet);
    bar->Update(p);
  };
  TransferReport uploads;
  o.uploads = &uploads;
  auto r = Publish(a.src, backend->get(), o, env);
  bar.reset();
  if (!r.ok() && (!uploads.failures.empty() || !uploads.warnings.empty())) {
    // As put: each failed upload, the run's warnings, and with --json the
    // uploads' summary; then why nothing (more) was published.
    const int rc = ReportTransfer("publish", uploads, a.common.json, t0);
    const int failed = Fail(r.status());
    return rc != kExitOk ? rc : failed;
  }
  if (!r.ok()) return Fail(r.status());
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (a.common.json) {
    PrintJson(a, *r, secs);
  } else {
    PrintText(a, *r);
  }
  return kExitOk;
}

}  // namespace

Runner RegisterPublish(CLI::App* app) {
  auto a = std::make_shared<PublishArgs>();
  CLI::App* cmd = app->add_subcommand(
      "publish",
      "Publish a folder as a new version of a dataset in a bucket: "
      "content-addressed objects (only those the remote lacks), a manifest, "
      "then HEAD (docs/sync.md).\n"
      "  ferry publish packed/ s3://bucket/datasets/cats -m 'more cats' "
      "--tag v2\n"
      "  ferry publish packed/ file:///mnt/share/cats --dry-run");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  cmd->add_option("src", a->src, "SRC folder")->required();
  cmd->add_option("remote", a->url, "REMOTE (s3://, file://, path)")
      ->required();
  cmd->add_option("--tag", a->publish.tag,
                  "Also point tags/NAME at the version (moved if it exists)");
  cmd->add_option("-m,--message", a->publish.message, "Message of the version");
  cmd->add_flag("--dry-run", a->publish.dry_run,
                "Say what would be uploaded; write nothing");
  cmd->add_flag("--mirror", a->publish.mirror,
                "Also write each file at its own path under REMOTE");
  cmd->add_flag("--no-packs", a->no_packs,
                "Upload each new file as its own object, also those below "
                "1 MiB (no packs: a ferry from before packs can sync it)");
  a->filters.AddOptions(cmd, "");
  cmd->add_option("--cache", a->publish.cache_dir,
                  "Folder of the stat cache (default $FERRY_CACHE or "
                  "~/.cache/ferry)");
  return [a] { return RunPublish(*a); };
}

}  // namespace ferry::cli
