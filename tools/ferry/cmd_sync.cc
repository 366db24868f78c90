// ferry sync: keep DEST a view of a published dataset, moving only what
// changed (docs/sync.md); ferry sync --check DEST re-hashes a view.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "ferry/atomic_file.h"
#include "ferry/json.h"
#include "ferry/sync.h"
#include "remote_options.h"
#include "transfer_cli.h"

namespace ferry::cli {
namespace {

struct SyncArgs {
  CommonOptions common;
  RemoteOptions remote;
  std::vector<std::string> args;  // REMOTE[@REF] DEST, or DEST with --check
  std::string cache;
  std::string cache_limit;
  std::string basis;
  std::string rank;
  int world_size = 0;
  bool remove_replaced = false;
  bool in_place = false;
  std::string list;
  bool dry_run = false;
  bool no_fsync = false;
  bool check = false;
  int watch = 0;  // seconds between rounds; 0: one sync
  PathFilters filters;
};

// "s3://b/data@v2" -> ("s3://b/data", "v2"): the last '@' with no '/'
// after it (so a user@host in a URL is not taken for a ref).
void SplitRef(const std::string& arg, std::string* remote, std::string* ref) {
  size_t at = arg.rfind('@');
  if (at != std::string::npos && at > 0 &&
      arg.find('/', at) == std::string::npos && at + 1 < arg.size()) {
    *remote = arg.substr(0, at);
    *ref = arg.substr(at + 1);
  } else {
    *remote = arg;
    *ref = "HEAD";
  }
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// --rank auto's sources, the first one set wins: torchrun (RANK,
// WORLD_SIZE; under Slurm too, where its RANK and not SLURM_PROCID is the
// process's), Slurm (SLURM_PROCID, SLURM_NTASKS), a Kubernetes indexed Job
// (JOB_COMPLETION_INDEX; the world size is --world-size's).
struct RankSource {
  const char* rank;
  const char* world;  // nullptr: none, --world-size gives it
};
constexpr RankSource kRankSources[] = {{"RANK", "WORLD_SIZE"},
                                       {"SLURM_PROCID", "SLURM_NTASKS"},
                                       {"JOB_COMPLETION_INDEX", nullptr}};

// --rank R --world-size N, or --rank auto (kRankSources). A source counts
// once any of its variables is set: one half set is an error naming what is
// missing, never skipped for the next (RANK without WORLD_SIZE under Slurm
// gave SLURM_PROCID's share: a job silently trained on another rank's data).
// --world-size stands in for a source's world size. A bad value is blamed
// on the variable it came from.
Status ResolveRank(const SyncArgs& a, SyncSelection* sel) {
  if (a.rank.empty()) {
    if (a.world_size > 1)
      return Status::InvalidArgument("--world-size", "needs --rank");
    return Status::OK();
  }
  std::string rank = a.rank, world;
  std::string rank_from = "--rank", world_from = "--world-size";
  if (a.world_size > 0) world = std::to_string(a.world_size);
  if (rank == "auto") {
    const RankSource* src = nullptr;
    for (const RankSource& s : kRankSources) {
      if (Env(s.rank) || (s.world && Env(s.world))) {
        src = &s;
        break;
      }
    }
    if (src == nullptr)
      return Status::InvalidArgument(
          "--rank auto",
          "found none of RANK/WORLD_SIZE, "
          "SLURM_PROCID/SLURM_NTASKS, JOB_COMPLETION_INDEX");
    if (!Env(src->rank))
      return Status::InvalidArgument(
          "--rank auto", std::string(src->world) + " is set but " + src->rank +
                             " is not: set " + src->rank +
                             ", or pass --rank R");
    rank = Env(src->rank);
    rank_from = std::string("--rank auto: ") + src->rank;
    if (world.empty() && src->world == nullptr)
      return Status::InvalidArgument(
          "--rank auto",
          std::string(src->rank) + " gives the rank only: pass --world-size N");
    if (world.empty() && !Env(src->world))
      return Status::InvalidArgument(
          "--rank auto", std::string(src->rank) + " is set but " + src->world +
                             " is not: set " + src->world +
                             ", or pass --world-size N");
    if (world.empty()) {
      world = Env(src->world);
      world_from = std::string("--rank auto: ") + src->world;
    } else if (src->world && Env(src->world)) {
      // Both say: they must agree, or a rank syncs another world's share
      // and some shards go to no node, without a word.
      auto env_n =
          ParseUint(Env(src->world), std::string("--rank auto: ") + src->world,
                    1, 1 << 20);
      if (!env_n.ok()) return env_n.status();
      if (*env_n != static_cast<uint64_t>(a.world_size))
        return Status::InvalidArgument(
            "--rank auto",
            std::string(src->world) + " is " + std::to_string(*env_n) +
                " but --world-size is " + std::to_string(a.world_size) +
                ": they must agree (or drop --world-size)");
    }
  }
  if (world.empty())
    return Status::InvalidArgument("--rank", "needs --world-size");
  FERRY_ASSIGN_OR_RETURN(uint64_t n, ParseUint(world, world_from, 1, 1 << 20));
  FERRY_ASSIGN_OR_RETURN(uint64_t r, ParseUint(rank, rank_from, 0, n - 1));
  sel->rank = static_cast<int>(r);
  sel->world_size = static_cast<int>(n);
  return Status::OK();
}

// Tests kill an --in-place sync midway: FERRY_TEST_SYNC_PAUSE_AFTER=N makes
// it create FERRY_TEST_SYNC_PAUSE_FILE after its Nth file and wait (60 s).
std::function<void(uint64_t)> TestPause() {
  const char* n = std::getenv("FERRY_TEST_SYNC_PAUSE_AFTER");
  const char* file = std::getenv("FERRY_TEST_SYNC_PAUSE_FILE");
  if (n == nullptr || file == nullptr) return {};
  const uint64_t after = std::strtoull(n, nullptr, 10);
  const std::string path = file;
  return [after, path](uint64_t placed) {
    if (placed != after) return;
    (void)WriteFileAtomically(Env::Default(), path, "");
    std::this_thread::sleep_for(std::chrono::seconds(60));
  };
}

int RunCheck(const SyncArgs& a) {
  if (a.args.size() != 1)
    return Fail(Status::InvalidArgument("--check", "takes DEST only"));
  std::string extra;  // options --check would ignore
  if (a.in_place) extra += " --in-place";
  if (a.remove_replaced) extra += " --delete";
  if (a.dry_run) extra += " --dry-run";
  if (!a.list.empty()) extra += " --list";
  if (!extra.empty())
    return Fail(Status::InvalidArgument(
        "--check", "takes none of" + extra + " (it reads DEST's own state)"));
  auto r = CheckView(a.args[0], Env::Default());
  if (!r.ok()) return Fail(r.status());
  for (const auto& [path, why] : r->problems)
    std::fprintf(stderr, "ferry: %s: %s\n", Printable(path).c_str(),
                 Printable(why).c_str());
  if (a.common.json) {
    JsonWriter w(stdout);
    w.BeginObject()
        .Key("command")
        .String("sync --check")
        .Key("manifest_id")
        .String(r->manifest_id)
        .Key("files")
        .Uint(r->files)
        .Key("bytes")
        .Uint(r->bytes)
        .Key("problems")
        .BeginArray();
    for (const auto& [path, why] : r->problems)
      w.BeginObject()
          .Key("path")
          .String(path)
          .Key("error")
          .String(why)
          .EndObject();
    w.EndArray().EndObject();
    std::fputc('\n', stdout);
  } else if (!a.common.quiet) {
    std::printf("%s: %llu files, %llu bytes checked against manifest %s: %s\n",
                Printable(a.args[0]).c_str(), (unsigned long long)r->files,
                (unsigned long long)r->bytes, r->manifest_id.c_str(),
                r->problems.empty() ? "all good" : "PROBLEMS");
  }
  return r->problems.empty() ? kExitOk : kExitIntegrity;
}

void PrintJson(const SyncReport& r, bool dry_run, double secs) {
  JsonWriter w(stdout);
  w.BeginObject()
      .Key("command")
      .String("sync")
      .Key("dry_run")
      .Bool(dry_run)
      .Key("unchanged")
      .Bool(r.unchanged)
      .Key("manifest_id")
      .String(r.manifest_id)
      .Key("view")
      .String(r.view)
      .Key("files")
      .Uint(r.files)
      .Key("bytes")
      .Uint(r.bytes)
      .Key("objects")
      .Uint(r.objects)
      .Key("files_cached")
      .Uint(r.files_cached)
      .Key("files_adopted")
      .Uint(r.files_adopted)
      .Key("bytes_adopted")
      .Uint(r.bytes_adopted)
      .Key("objects_fetched")
      .Uint(r.objects_fetched)
      .Key("bytes_fetched")
      .Uint(r.bytes_fetched)
      .Key("bytes_resumed")
      .Uint(r.bytes_resumed)
      .Key("requests")
      .Uint(r.requests)
      .Key("paths")  // how each object came (docs/delta.md "Sync side")
      .BeginObject()
      .Key("cache")
      .BeginObject()
      .Key("objects")
      .Uint(r.files_cached)
      .Key("bytes")
      .Uint(r.bytes_cached)
      .EndObject()
      .Key("adopted")
      .BeginObject()
      .Key("objects")
      .Uint(r.files_adopted)
      .Key("bytes")
      .Uint(r.bytes_adopted)
      .EndObject()
      .Key("delta")
      .BeginObject()
      .Key("objects")
      .Uint(r.objects_patched)
      .Key("bytes_fetched")
      .Uint(r.delta_bytes_fetched)
      .Key("bytes_produced")
      .Uint(r.bytes_patched)
      .Key("fallbacks")
      .Uint(r.delta_fallbacks)
      .EndObject()
      .Key("blocks")
      .BeginObject()
      .Key("objects")
      .Uint(r.objects_reused)
      .Key("bytes_fetched")
      .Uint(r.block_bytes_fetched)
      .Key("bytes_copied")
      .Uint(r.bytes_copied)
      .Key("bytes_part_matched")
      .Uint(r.bytes_part_matched)
      .Key("bytes_produced")
      .Uint(r.bytes_reused)
      .Key("fallbacks")
      .Uint(r.block_fallbacks);
  // A dry run cannot scan: the ranges are at most the objects.
  if (dry_run) w.Key("range_bytes_at_most").Uint(r.block_range_bytes_max);
  w.EndObject()
      .Key("whole")
      .BeginObject()
      .Key("objects")
      .Uint(r.objects_whole)
      .Key("bytes")
      .Uint(r.bytes_whole)
      .EndObject()
      .EndObject()
      .Key("retries")
      .BeginObject();
  for (const auto& [cause, n] : r.retries) w.Key(cause).Uint(n);
  w.EndObject()
      .Key("evicted_objects")
      .Uint(r.evicted_objects)
      .Key("evicted_bytes")
      .Uint(r.evicted_bytes)
      .Key("old_views_removed")
      .Uint(r.old_views_removed)
      .Key("old_views_in_use")
      .Uint(r.old_views_in_use)
      .Key("replaced_folder")
      .String(r.replaced_folder)
      .Key("kept_old_views")
      .BeginArray();
  for (const auto& [folder, extras] : r.kept_old_views) {
    w.BeginObject().Key("folder").String(folder).Key("extras").BeginArray();
    for (const std::string& x : extras) w.String(x);
    w.EndArray().EndObject();
  }
  w.EndArray()
      .Key("unmanaged")
      .Bool(r.unmanaged)
      .Key("files_listed")
      .Uint(r.files_listed)
      .Key("files_copied")
      .Uint(r.files_copied)
      .Key("files_reflinked")
      .Uint(r.files_reflinked)
      .Key("files_placed")
      .Uint(r.files_placed)
      .Key("files_kept")
      .Uint(r.files_kept)
      .Key("files_removed")
      .Uint(r.files_removed)
      .Key("failures")
      .BeginArray();
  for (const auto& [name, s] : r.failures)
    w.BeginObject()
        .Key("path")
        .String(name)
        .Key("error")
        .String(RedactUrls(s.ToString()))
        .EndObject();
  // What stderr shows as "ferry: warning: ..." (a server unreachable, what
  // the cache's opening cleared away), as get/put's --json.
  w.EndArray().Key("warnings").BeginArray();
  for (const std::string& warning : r.warnings) w.String(RedactUrls(warning));
  w.EndArray().Key("seconds").Double(secs).EndObject();
  std::fputc('\n', stdout);
}

// --watch: the signal that ends it (0: none yet), and whether a sync runs.
volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_in_sync = 0;

void OnStopSignal(int sig) {
  g_stop = sig;
  // A sync in progress ends here, as a kill would end it: what it fetched
  // is journalled and DEST is the old view or the new one (docs/sync.md
  // "Crashes"), so the next run resumes. Watching ended as asked: exit 0.
  if (g_in_sync) _exit(kExitOk);
}

int SyncOnce(const SyncArgs& a, const SyncOptions& o, bool quiet_if_unchanged);

// Syncs every `a.watch` seconds (one conditional GET of the ref when it did
// not change) until SIGINT or SIGTERM; a failed round is reported and the
// next one tries again, except for usage errors.
int Watch(const SyncArgs& a, const SyncOptions& o) {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const auto period = std::chrono::seconds(a.watch);
  while (!g_stop) {
    const auto next = std::chrono::steady_clock::now() + period;
    g_in_sync = 1;
    int rc = g_stop ? kExitOk : SyncOnce(a, o, /*quiet_if_unchanged=*/true);
    g_in_sync = 0;
    std::fflush(stdout);
    if (rc == kExitUsage) return rc;
    while (!g_stop && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return kExitOk;
}

// A sync holds at once the cache's 64 byte-lock files, its index, the
// transfers' sockets and part files and the files waiting for one syncfs.
// A soft descriptor limit below kWantFiles is raised (up to the hard one);
// below kNeedFiles the sync would fail midway with "Too many open files",
// so it is refused up front, naming the limit (exit 2).
constexpr rlim_t kNeedFiles = 160, kWantFiles = 4096;

Status EnsureDescriptors() {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return Status::OK();
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < kWantFiles) {
    struct rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max == RLIM_INFINITY
                          ? kWantFiles
                          : std::min<rlim_t>(lim.rlim_max, kWantFiles);
    if (raised.rlim_cur > lim.rlim_cur &&
        setrlimit(RLIMIT_NOFILE, &raised) == 0)
      lim = raised;
  }
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < kNeedFiles)
    return Status::InvalidArgument(
        "sync", "needs at least " + std::to_string(kNeedFiles) +
                    " open files; the limit is " +
                    std::to_string(lim.rlim_cur) + " (ulimit -n)");
  return Status::OK();
}

int RunSync(SyncArgs& a) {
  if (a.check) return RunCheck(a);
  if (Status fds = EnsureDescriptors(); !fds.ok()) return Fail(fds);
  if (a.args.size() != 2)
    return Fail(Status::InvalidArgument("sync", "needs REMOTE[@REF] DEST"));
  SyncOptions o;
  SplitRef(a.args[0], &o.remote, &o.ref);
  o.dest = a.args[1];
  o.cache_dir = a.cache;
  o.basis_dir = a.basis;
  if (!a.cache_limit.empty()) {
    auto limit = ParseByteSize(a.cache_limit, "--cache-limit", 1, ~0ull);
    if (!limit.ok()) return Fail(limit.status());
    o.cache_limit = *limit;
  }
  Status s = ResolveRank(a, &o.selection);
  if (!s.ok()) return Fail(s);
  o.selection.filters = a.filters.List();
  o.remove_replaced = a.remove_replaced;
  o.in_place = a.in_place;
  o.list = a.list;
  o.on_placed = TestPause();
  o.detach_old_view_removal = true;  // ferry exits once DEST is switched
  o.dry_run = a.dry_run;
  o.remote_options = a.remote;
  o.transfer = TransferOptionsFrom(a.remote, false);
  o.transfer.fsync = !a.no_fsync;
  if (a.watch > 0) {
    if (a.dry_run)
      return Fail(Status::InvalidArgument("--watch", "and --dry-run"));
    return Watch(a, o);
  }
  return SyncOnce(a, o, false);
}

int SyncOnce(const SyncArgs& a, const SyncOptions& o, bool quiet_if_unchanged) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = Sync(o, Env::Default());
  if (!r.ok()) return Fail(r.status());
  for (const std::string& w : r->warnings)
    std::fprintf(stderr, "ferry: warning: %s\n", Printable(w).c_str());
  int rc = ReportFailures(r->failures);
  if (!r->failures.empty())
    std::fprintf(stderr, "ferry: %s left as it was\n",
                 Printable(o.dest).c_str());
  for (const auto& [folder, extras] : r->kept_old_views) {
    std::string some;
    for (size_t i = 0; i < extras.size() && i < 5; ++i)
      some += (i ? ", " : "") + extras[i];
    if (extras.size() > 5) some += ", ...";
    std::fprintf(stderr,
                 "ferry: warning: %s: the old view held %zu file(s) ferry did "
                 "not place (%s): kept, moved to %s\n",
                 Printable(o.dest).c_str(), extras.size(),
                 Printable(some).c_str(), Printable(folder).c_str());
  }
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (r->unchanged && quiet_if_unchanged) {
    // --watch: only rounds that did something are shown.
  } else if (a.common.json) {
    PrintJson(*r, a.dry_run, secs);
  } else if (!a.common.quiet) {
    // An unmanaged remote's dry run has no id yet (its files unhashed).
    const std::string version = r->manifest_id.empty()
                                    ? std::string("listed files")
                                    : "manifest " + r->manifest_id;
    if (r->unchanged) {
      std::printf("%s%s: unchanged (%s, %llu requests)\n",
                  a.dry_run ? "(dry run) " : "", Printable(o.dest).c_str(),
                  version.c_str(), (unsigned long long)r->requests);
    } else {
      std::printf(
          "%s%s: %s, %llu files, %llu bytes; %llu from the cache, "
          "%llu adopted, %llu objects fetched (%llu bytes); %llu requests\n",
          a.dry_run ? "(dry run) " : "", Printable(o.dest).c_str(),
          version.c_str(), (unsigned long long)r->files,
          (unsigned long long)r->bytes, (unsigned long long)r->files_cached,
          (unsigned long long)r->files_adopted,
          (unsigned long long)r->objects_fetched,
          (unsigned long long)r->bytes_fetched,
          (unsigned long long)r->requests);
      if (a.dry_run && r->objects_reused > 0)
        std::printf(
            "(dry run) %llu objects by block reuse: %llu bytes of signatures, "
            "then ranges of at most %llu bytes (the scan decides; counted "
            "whole above)\n",
            (unsigned long long)r->objects_reused,
            (unsigned long long)r->block_bytes_fetched,
            (unsigned long long)r->block_range_bytes_max);
    }
    if (!r->replaced_folder.empty())
      std::printf(
          "%s was a folder: its files were adopted and it was moved "
          "to %s\n",
          Printable(o.dest).c_str(), Printable(r->replaced_folder).c_str());
  }
  return rc;
}

}  // namespace

Runner RegisterSync(CLI::App* app) {
  auto a = std::make_shared<SyncArgs>();
  CLI::App* cmd = app->add_subcommand(
      "sync",
      "Keep DEST a local copy of a dataset published with ferry publish: only "
      "what changed moves; DEST (a link to a view of hard links into the "
      "cache) switches versions atomically.\n"
      "  ferry sync s3://bucket/imagenet /data/imagenet --cache /nvme/ferry\n"
      "  ferry sync https://host/ds@v2 /data/ds --rank auto --cache-limit "
      "500G\n"
      "  ferry sync --check /data/imagenet");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  cmd->add_option("args", a->args, "REMOTE[@REF] DEST (DEST with --check)")
      ->required()
      ->expected(1, 2);
  cmd->add_option("--cache", a->cache,
                  "Cache folder (default: $FERRY_CACHE, else ~/.cache/ferry)");
  cmd->add_option("--cache-limit", a->cache_limit,
                  "Evict least recently used objects no view uses to stay "
                  "below this size (e.g. 500G)");
  cmd->add_option("--basis", a->basis,
                  "A tree whose file at a path lends its blocks to that "
                  "path's new object (block reuse, docs/delta.md)");
  cmd->add_option("--rank", a->rank,
                  "This node's rank (or auto: the first set of "
                  "RANK/WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS, "
                  "JOB_COMPLETION_INDEX): only its share of the shards");
  AddUintOption(cmd, "--world-size", &a->world_size,
                "Number of ranks sharing the shards", 1, 1 << 20)
      ->default_str("");
  a->filters.AddOptions(cmd, "");
  cmd->add_flag("--delete", a->remove_replaced,
                "A first sync into a folder with files: remove that folder "
                "after adopting its files (default: moved aside); with "
                "--in-place: remove the files in DEST ferry did not place");
  cmd->add_flag("--in-place", a->in_place,
                "DEST is a plain folder updated file by file (no view, no "
                "link; readers may see a mix of versions while it runs)");
  cmd->add_option("--list", a->list,
                  "A remote without .ferry (unmanaged): a file or URL naming "
                  "its files, one relative path a line, at most 64 MiB and "
                  "1,000,000 names (needed for http(s)://; s3:// and file:// "
                  "are listed)");
  cmd->add_flag("--dry-run", a->dry_run,
                "Read the ref and manifest, print what would move; write "
                "nothing");
  cmd->add_flag("--no-fsync", a->no_fsync,
                "Never fsync downloads into the cache (faster; a kill -9 "
                "still resumes, but after a power loss a cached object may "
                "be damaged: docs/remote.md)");
  AddUintOption(cmd, "--watch", &a->watch,
                "Stay running: sync whenever the ref changes, checking every "
                "SECONDS (one conditional GET); SIGINT/SIGTERM end it (exit 0)",
                1, 1 << 30)
      ->default_str("");
  cmd->add_flag("--check", a->check,
                "Re-hash DEST's view against its manifest (exit 3 naming "
                "files)");
  return [a] { return RunSync(*a); };
}

}  // namespace ferry::cli
