// ferry pack: images -> train/val/test shards (TFRecord or WebDataset).
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cli.h"
#include "ferry/atomic_file.h"
#include "ferry/backend_wrapper.h"
#include "ferry/json.h"
#include "ferry/pack.h"
#include "ferry/remote.h"
#include "options.h"
#include "remote_options.h"

namespace ferry::cli {
namespace {

struct PackArgs {
  CommonOptions common;
  RemoteOptions remote;  // OUT in a bucket (distributed pack)
  std::string tmp;
  bool verify_remote = false;
  ImageArgs image;
  SplitArgs split;
  std::string src, out, format = "tfrecord", shard_size = "256MiB",
                        compress = "none", list;
  uint64_t shard_records = 0;
  bool dry_run = false, include_hidden = false;
  bool plan = false, merge = false;  // distributed pack (docs/scale.md)
  std::string worker;                // "I/N"
};

// Tests stop a worker between two writes: FERRY_TEST_PACK_PAUSE_AFTER=N
// makes the Nth write to OUT (into a bucket: each object; into a folder:
// each shard with its index, each worker list) create
// FERRY_TEST_PACK_PAUSE_FILE once it is done, then stop the process
// (SIGSTOP: the test kills it, or resumes it with SIGCONT).
struct PauseHook {
  uint64_t after = 0, writes = 0;
  std::string file;
  void Wrote() {
    if (++writes != after) return;
    (void)WriteFileAtomically(Env::Default(), file, "");
    std::raise(SIGSTOP);
  }
};

std::shared_ptr<PauseHook> PauseHookFromEnv() {
  const char* after = std::getenv("FERRY_TEST_PACK_PAUSE_AFTER");
  const char* file = std::getenv("FERRY_TEST_PACK_PAUSE_FILE");
  if (after == nullptr || file == nullptr) return nullptr;
  return std::make_shared<PauseHook>(
      PauseHook{std::strtoull(after, nullptr, 10), 0, file});
}

class PausingBackend : public BackendWrapper {
 public:
  PausingBackend(std::unique_ptr<Backend> b, std::shared_ptr<PauseHook> hook)
      : BackendWrapper(std::move(b)), hook_(std::move(hook)) {}
  Result<ObjectInfo> Write(std::string_view k, ByteSource* s,
                           const WriteOptions& o) override {
    auto r = BackendWrapper::Write(k, s, o);
    hook_->Wrote();
    return r;
  }

 private:
  std::shared_ptr<PauseHook> hook_;
};

// OUT's bucket when OUT is a URL (a distributed pack's), else null.
Result<std::unique_ptr<Backend>> OutBackend(const PackArgs& a) {
  if (a.out.find("://") == std::string::npos) return std::unique_ptr<Backend>();
  if (!a.plan && !a.merge && a.worker.empty()) {
    return Status::InvalidArgument(
        "OUT '" + a.out +
        "' is a URL: a one-machine ferry pack writes a folder (publish it "
        "with ferry publish); a distributed pack (--plan, --worker, --merge; "
        "docs/scale.md) writes into a bucket");
  }
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Backend> b,
                         OpenBackend(a.out, a.remote, Env::Default()));
  if (!b->caps().writes || !b->caps().listing) {
    return Status::InvalidArgument(
        "OUT '" + a.out +
        "' cannot be written (http(s) is read-only): a distributed pack "
        "writes into s3:// or file://");
  }
  if (auto hook = PauseHookFromEnv()) {
    return std::unique_ptr<Backend>(
        std::make_unique<PausingBackend>(std::move(b), std::move(hook)));
  }
  return b;
}

// The run a distributed mode asks for (Pack when none).
Result<PackSummary> RunMode(const PackArgs& a, const PackOptions& o) {
  if (int(a.plan) + int(a.merge) + int(!a.worker.empty()) > 1 ||
      (a.dry_run && (a.plan || a.merge || !a.worker.empty()))) {
    return Status::InvalidArgument(
        "--plan, --worker, --merge and --dry-run go one at a time");
  }
  if (a.plan) return PackPlan(a.src, a.out, o);
  if (a.merge) return PackMerge(a.src, a.out, o);
  if (a.worker.empty()) return Pack(a.src, a.out, o);
  // Digits only (sscanf's %u took " 1" and wrapped 4294967297 to 1).
  unsigned i = 0, n = 0;
  const std::string& w = a.worker;
  const size_t slash = w.find('/');
  auto number = [&](size_t from, size_t to, unsigned* v) {
    return from < to && std::from_chars(w.data() + from, w.data() + to, *v) ==
                            std::from_chars_result{w.data() + to, std::errc()};
  };
  if (slash == std::string::npos || !number(0, slash, &i) ||
      !number(slash + 1, w.size(), &n) || n == 0 || i >= n || n > 1000000) {
    return Status::InvalidArgument("--worker wants I/N (0 <= I < N), got '" +
                                   a.worker + "'");
  }
  return PackWorker(a.src, a.out, o, int(i), int(n));
}

Result<uint64_t> ParseBytes(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string unit(end);
  double mult = unit.empty() || unit == "B"    ? 1
                : unit == "KiB" || unit == "K" ? 1024.0
                : unit == "MiB" || unit == "M" ? 1048576.0
                : unit == "GiB" || unit == "G" ? 1073741824.0
                : unit == "KB"                 ? 1e3
                : unit == "MB"                 ? 1e6
                : unit == "GB"                 ? 1e9
                                               : -1;
  // Finite and below 2^62 bytes: the cast below must not overflow.
  if (end == s.c_str() || mult < 0 || !(v > 0) || !(v * mult < 0x1p62)) {
    return Status::InvalidArgument(
        "--shard-size wants a size like 256MiB, got '" + s + "'");
  }
  return static_cast<uint64_t>(v * mult);
}

int RunPack(const PackArgs& a) {
  PackOptions o;
  auto backend = OutBackend(a);
  if (!backend.ok()) return Fail(backend.status());
  o.out_backend = backend->get();
  if (auto hook = PauseHookFromEnv(); hook && o.out_backend == nullptr)
    o.after_worker_write = [hook] { hook->Wrote(); };
  o.tmp_dir = a.tmp;
  o.verify_remote = a.verify_remote;
  Status s = FillImageOptions(a.image, &o.transcode);
  if (s.ok()) s = FillSplitSpec(a.split, &o.split);
  if (!s.ok()) return Fail(s);
  if (a.format != "tfrecord" && a.format != "wds")
    return Fail(Status::InvalidArgument("--format is tfrecord or wds"));
  if (a.compress != "none" && a.compress != "gzip")
    return Fail(Status::InvalidArgument("--compress is gzip or none"));
  o.format =
      a.format == "wds" ? ShardFormat::kWebDataset : ShardFormat::kTfRecord;
  o.gzip = a.compress == "gzip";
  auto bytes = ParseBytes(a.shard_size);
  if (!bytes.ok()) return Fail(bytes.status());
  o.shard_bytes = *bytes;
  o.shard_records = a.shard_records;
  o.list_path = a.list;
  o.include_hidden = a.include_hidden;
  o.jobs = a.common.ResolvedJobs();
  o.dry_run = a.dry_run;
  auto progress = NewTerminalProgress(a.common.quiet || a.common.json);
  o.progress = progress.get();
  auto t0 = std::chrono::steady_clock::now();
  auto sum = RunMode(a, o);
  if (!sum.ok()) return Fail(sum.status());
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (sum->merged_already && !a.common.quiet) {
    std::fprintf(stderr,
                 "ferry pack --merge: %s is merged already (no plan; its "
                 "dataset.json lists %llu records): nothing to do\n",
                 Printable(a.out).c_str(), (unsigned long long)sum->records);
    return kExitOk;
  }
  if (!a.common.json) {
    if (a.common.verbose) {
      for (const PackFailure& f : sum->skipped) {
        std::fprintf(stderr, "%s: skipped: %s\n", Printable(f.input).c_str(),
                     Printable(f.error.message()).c_str());
      }
    }
    for (const PackFailure& f : sum->failed) {
      std::fprintf(stderr, "ferry: %s: %s\n", Printable(f.input).c_str(),
                   Printable(f.error.ToString()).c_str());
    }
  }
  if (a.common.json) {
    JsonWriter j(stdout);
    j.BeginObject().Key("command").String("pack").Key("dry_run").Bool(
        a.dry_run);
    j.Key("records").Uint(sum->records).Key("failed").Uint(sum->failed.size());
    j.Key("skipped").Uint(sum->skipped.size());
    j.Key("reused_shards").Uint(sum->reused_shards).Key("seconds").Double(secs);
    j.Key("dropped_duplicates").Uint(sum->dropped_duplicates);
    j.Key("images_per_s")
        .Double(secs > 0 ? sum->records / secs : 0)
        .Key("splits")
        .BeginObject();
    for (const PackSplit& sp : sum->splits) {
      j.Key(sp.name)
          .BeginObject()
          .Key("records")
          .Uint(sp.records)
          .Key("shards")
          .Uint(sp.shards.size())
          .EndObject();
    }
    j.EndObject().Key("failures").BeginArray();
    for (const PackFailure& f : sum->failed) {
      j.BeginObject()
          .Key("input")
          .String(f.input)
          .Key("error")
          .String(f.error.ToString())
          .EndObject();
    }
    j.EndArray().EndObject();
  } else if (!a.common.quiet) {
    std::fprintf(stderr, "ferry pack: %llu records",
                 (unsigned long long)sum->records);
    for (const PackSplit& sp : sum->splits) {
      std::fprintf(stderr, ", %s %llu in %zu shards",
                   Printable(sp.name).c_str(), (unsigned long long)sp.records,
                   sp.shards.size());
    }
    if (sum->dropped_duplicates > 0) {
      std::fprintf(stderr, "; %llu duplicates dropped",
                   (unsigned long long)sum->dropped_duplicates);
    }
    std::fprintf(stderr,
                 "; %zu skipped (not inputs; -v says why); %zu failed; %llu "
                 "shards reused; %.2f s%s\n",
                 sum->skipped.size(), sum->failed.size(),
                 (unsigned long long)sum->reused_shards, secs,
                 a.dry_run ? " (dry run)" : "");
  }
  return sum->failed.empty() ? kExitOk : kExitItemsFailed;
}

}  // namespace

Runner RegisterPack(CLI::App* app) {
  auto a = std::make_shared<PackArgs>();
  CLI::App* cmd = app->add_subcommand(
      "pack", "Images -> split training shards (TFRecord or WebDataset)");
  cmd->footer(
      "Examples:\n"
      "  ferry pack data/ shards/ --size 512                  # TFRecord, "
      "7:2:1, 256 MiB shards\n"
      "  ferry pack data/ wds/ --format wds --size 256 --mode cover "
      "--shard-records 1000\n"
      "  ferry pack data/ all/ --ratios 1 --names all --compress gzip\n"
      "Writes <split>-NNNNN-of-MMMMM.{tfrecord,tar} (+ .idx), labels.txt, "
      "dataset.json (last).");
  cmd->add_option("src", a->src,
                  "Class-folder tree (or the root of --list paths)")
      ->required();
  cmd->add_option("out", a->out,
                  "Output directory (distributed pack: or s3://, file://)")
      ->required();
  cmd->add_option("--format", a->format, "tfrecord | wds")
      ->capture_default_str();
  cmd->add_option("--shard-size", a->shard_size, "Close a shard at this size")
      ->capture_default_str();
  AddUintOption(cmd, "--shard-records", &a->shard_records,
                "...or at this many records (0: no limit)", 0, UINT64_MAX);
  cmd->add_option("--compress", a->compress,
                  "gzip (TFRecord, as TF's GZIP) | none")
      ->capture_default_str();
  cmd->add_option("--list", a->list,
                  "CSV/JSONL listing (path,label,group) instead of the tree");
  AddImageOptions(cmd, &a->image);
  AddSplitOptions(cmd, &a->split);
  AddIncludeHiddenFlag(cmd, &a->include_hidden);
  cmd->add_flag("-n,--dry-run", a->dry_run,
                "Split and report; convert and write nothing");
  cmd->add_flag("--plan", a->plan,
                "Distributed pack, step 1: scan, hash and split the inputs "
                "once; write OUT/.ferry-pack-plan (needs --shard-records)");
  cmd->add_option("--worker", a->worker,
                  "Distributed pack, step 2: write worker I's share of the "
                  "planned shards (I/N, 0 <= I < N)");
  cmd->add_flag("--merge", a->merge,
                "Distributed pack, step 3: check every planned shard, write "
                "indexes, labels and dataset.json (same options everywhere)");
  cmd->add_option("--tmp", a->tmp,
                  "OUT in a bucket: the local folder a worker writes each "
                  "shard into before it uploads it (default $TMPDIR or /tmp)");
  cmd->add_flag("--verify-remote", a->verify_remote,
                "OUT in a bucket: read every shard back and hash it (merge, "
                "and a worker's rerun), not only its size and ETag");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  return [a] { return RunPack(*a); };
}

}  // namespace ferry::cli
