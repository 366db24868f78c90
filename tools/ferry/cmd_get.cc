// ferry get: objects (or whole prefixes with -R) from a remote into local
// files, parallel, ranged, resumable, verified (docs/remote.md).
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "ferry/env.h"
#include "ferry/hash.h"
#include "remote_options.h"
#include "transfer_cli.h"

namespace ferry::cli {
namespace {

struct GetArgs {
  CommonOptions common;
  RemoteOptions remote;
  std::vector<std::string> args;  // SRC... DST
  bool recursive = false;
  bool dry_run = false;
  bool no_fsync = false;
  std::string expect;
  PathFilters filters;
};

// One backend and the items fetched from it.
struct Batch {
  std::string url;
  std::vector<GetItem> items;
};

// Items that cannot be fetched (a key that is no file name below DST, or
// whose file another key claims) go into *refused, by key; the others are
// fetched. S3 folder markers are skipped (counted). What a file:// walk
// met besides files goes into *problems.
Status Plan(const GetArgs& a, Env* env, std::vector<Batch>* batches,
            TransferReport* refused, SourceProblems* problems) {
  std::vector<std::string> srcs(a.args.begin(), a.args.end() - 1);
  const std::string& dst = a.args.back();
  if (!a.recursive && !a.filters.empty())
    return Status::InvalidArgument("--include/--exclude", "need -R");
  auto st = env->Stat(dst);
  bool into_dir = a.recursive || srcs.size() > 1 ||
                  (!dst.empty() && dst.back() == '/') ||
                  (st.ok() && st->is_dir);
  std::vector<GetItem> items;
  std::vector<size_t> batch_of;
  auto refuse = [&](const std::string& key, const Status& s) {
    ++refused->files_failed;
    refused->failures.emplace_back(key, s);
  };
  // A key below DST: a name that stays below it, no link inside followed.
  // name: the file name (an http(s) URL's decoded last segment), else key.
  auto add = [&](size_t batch, GetItem item, const std::string* name) {
    if (into_dir) {
      auto path = KeyPath(dst, name != nullptr ? *name : item.key);
      if (!path.ok()) return refuse(item.key, path.status());
      item.dest = *path;
      item.root = dst;
    } else {
      item.dest = dst;
    }
    items.push_back(std::move(item));
    batch_of.push_back(batch);
  };
  for (const std::string& src : srcs) {
    std::string object_url = src;  // with -R, when src names one object
    if (a.recursive && IsHttpUrl(src)) {
      // Plain HTTP(S) cannot be listed: a SRC naming an object is that
      // object (as an s3:// one is), asked for as get without -R asks for
      // it; a folder is no SRC there.
      auto u = SplitObjectUrl(src);
      if (!u.ok())
        return Status::NotSupported(src,
                                    "a folder cannot be listed over plain "
                                    "HTTP (name each object)");
      FERRY_ASSIGN_OR_RETURN(auto backend,
                             OpenBackend(u->parent, a.remote, env));
      auto one = backend->Stat(u->key);
      if (!one.ok()) {
        if (!one.status().IsNotFound()) return one.status();
        refuse(src, Status::NotFound("no such object"));
        continue;
      }
    } else if (a.recursive) {
      batches->push_back(Batch{src, {}});
      FERRY_ASSIGN_OR_RETURN(auto backend, OpenBackend(src, a.remote, env));
      uint64_t told = 0;   // entries and problems the listing gave
      bool named = false;  // the URL names one file (file://: its key "")
      ListOptions lo;
      lo.problem = [&](const std::string& key, const Status& why) {
        ++told;
        if (a.filters.Takes(key)) problems->Add(key.empty() ? src : key, why);
      };
      FERRY_RETURN_IF_ERROR(backend->List("", lo, [&](const ObjectInfo& info) {
        ++told;
        if (info.key.empty() && !info.is_prefix) {
          named = true;
          return Status::OK();
        }
        if (info.is_prefix || !a.filters.Takes(info.key)) return Status::OK();
        if (IsFolderMarker(info)) {
          ++refused->files_skipped;
          return Status::OK();
        }
        GetItem item;
        item.key = info.key;
        item.have_info = true;
        item.info = info;
        add(batches->size() - 1, std::move(item), nullptr);
        return Status::OK();
      }));
      if (told == 0) {
        // Nothing below it: the object the URL names (s3://b/data/x.bin,
        // as ls -R lists it), an empty folder, or a failure naming SRC.
        auto what = EmptyListingNames(backend.get(), src, false);
        if (!what.ok()) {
          if (!what.status().IsNotFound()) return what.status();
          refuse(src, Status::NotFound("no such object or prefix"));
          continue;
        }
        named = what->has_value();
      }
      if (!named) continue;
      // Fetched into DST/<its name>, as `cp -r file dir/` does.
      while (object_url.size() > 1 && object_url.back() == '/')
        object_url.pop_back();
    }
    FERRY_ASSIGN_OR_RETURN(ObjectUrl u, SplitObjectUrl(object_url));
    if (a.recursive && !a.filters.Takes(u.name)) continue;  // its path: name
    if (batches->empty() || batches->back().url != u.parent)
      batches->push_back(Batch{u.parent, {}});
    GetItem item;
    item.key = u.key;
    add(batches->size() - 1, std::move(item), &u.name);
  }
  std::vector<bool> clashed(items.size());
  for (auto& [i, s] : FindDestClashes(items)) {
    clashed[i] = true;
    refuse(items[i].key, s);
  }
  for (size_t i = 0; i < items.size(); ++i)
    if (!clashed[i])
      (*batches)[batch_of[i]].items.push_back(std::move(items[i]));
  if (!a.expect.empty()) {
    if (a.recursive || srcs.size() != 1)
      return Status::InvalidArgument("--expect", "takes one object only");
    FERRY_ASSIGN_OR_RETURN(Hash128 h, Hash128::FromHex(a.expect));
    for (Batch& b : *batches) {
      for (GetItem& item : b.items) {  // the one object, unless refused
        item.have_expected = true;
        item.expected = h;
      }
    }
  }
  return Status::OK();
}

int RunGet(GetArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  Env* env = Env::Default();
  if (a.args.size() < 2)
    return Fail(Status::InvalidArgument("get", "needs SRC... DST"));
  a.remote.http_keys_as_written = true;  // http(s) URLs used as written
  std::vector<Batch> batches;
  TransferReport total;  // starts with what the plan refused or skipped
  SourceProblems problems(a.common.quiet);
  Status s = Plan(a, env, &batches, &total, &problems);
  if (!s.ok()) return Fail(s);
  problems.MoveInto(&total);
  uint64_t files = 0;
  for (const Batch& b : batches) files += b.items.size();
  if (a.dry_run) {
    for (const Batch& b : batches)
      for (const GetItem& item : b.items)
        std::printf("get %s -> %s\n",
                    Printable(RedactUrls(KeyUrl(b.url, item.key))).c_str(),
                    Printable(item.dest).c_str());
    return ReportFailures(total.failures);
  }
  TransferBar bar("get", files, a.common.quiet || a.common.json);
  TransferOptions opt = TransferOptionsFrom(a.remote, false);
  opt.fsync = !a.no_fsync;
  uint64_t files_before = 0, bytes_before = 0;
  for (Batch& b : batches) {
    if (b.items.empty()) continue;
    auto backend = OpenBackend(b.url, a.remote, env);
    if (!backend.ok()) return Fail(backend.status());
    opt.progress = [&](const TransferProgress& p) {
      TransferProgress q = p;
      q.files_done += files_before;
      q.bytes_done += bytes_before;
      bar.Update(q);
    };
    auto r = GetObjects(backend->get(), std::move(b.items), opt, env);
    if (!r.ok()) return Fail(r.status());
    files_before += r->files_done;
    bytes_before += r->bytes - r->bytes_discarded + r->bytes_resumed;
    total.files_done += r->files_done;
    total.files_failed += r->files_failed;
    total.bytes += r->bytes;
    total.bytes_resumed += r->bytes_resumed;
    total.bytes_discarded += r->bytes_discarded;
    total.requests += r->requests;
    for (const auto& [cause, n] : r->retries) total.retries[cause] += n;
    for (auto& f : r->failures) total.failures.push_back(std::move(f));
    for (auto& w : r->warnings) total.warnings.push_back(std::move(w));
  }
  return ReportTransfer("get", total, a.common.json, t0);
}

}  // namespace

Runner RegisterGet(CLI::App* app) {
  auto a = std::make_shared<GetArgs>();
  CLI::App* cmd = app->add_subcommand(
      "get",
      "Download objects (or prefixes with -R) into a file or a folder: "
      "parallel ranged requests, resumable after a failure or kill, "
      "verified.\n"
      "  ferry get https://host/data/train-0000.tar ./shards/\n"
      "  ferry get -R s3://bucket/dataset/v1/ /nvme/dataset/\n"
      "  ferry get --expect 3c0d...e1 s3://bucket/a.bin a.bin");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  cmd->add_option("args", a->args, "SRC... DST")->required()->expected(2, -1);
  cmd->add_flag("-R,--recursive", a->recursive,
                "SRC names prefixes: every object below each");
  cmd->add_flag("--dry-run", a->dry_run, "Print what would be fetched");
  cmd->add_flag("--no-fsync", a->no_fsync,
                "Never fsync (faster; a kill -9 still resumes, but after a "
                "power loss a file may be incomplete: docs/remote.md)");
  a->filters.AddOptions(cmd, "; with -R, on keys below each SRC prefix");
  cmd->add_option("--expect", a->expect,
                  "XXH3-128 (32 hex digits) the one object must have; a "
                  "mismatch removes the download (exit 3)");
  return [a] { return RunGet(*a); };
}

}  // namespace ferry::cli
