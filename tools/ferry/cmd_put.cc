// ferry put: local files (or trees with -R) to a remote: parallel,
// multipart above --part-size where the backend has it (docs/remote.md).
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "ferry/env.h"
#include "ferry/sync.h"
#include "ferry/walk.h"
#include "remote_options.h"
#include "transfer_cli.h"

namespace ferry::cli {
namespace {

struct PutArgs {
  CommonOptions common;
  RemoteOptions remote;
  std::vector<std::string> args;  // SRC... DST
  bool recursive = false;
  bool dry_run = false;
  PathFilters filters;
  bool part_size_given = false;  // --part-size on the command line
};

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// The backend's URL and the items: a DST ending in '/', several SRCs or -R
// make DST a prefix (keys are file names, or paths below each SRC tree);
// otherwise DST names the one object. A SRC that is no regular file (a
// device, a FIFO) is a failed item. Below a folder, such files are skipped,
// ferry's own working files are never taken, and --include/--exclude choose
// among the rest.
Status Plan(const PutArgs& a, Env* env, std::string* url,
            std::vector<PutItem>* items, SourceProblems* problems) {
  std::vector<std::string> srcs(a.args.begin(), a.args.end() - 1);
  std::string dst = a.args.back();
  if (!a.recursive && !a.filters.empty())
    return Status::InvalidArgument("--include/--exclude", "need -R");
  bool into_prefix =
      a.recursive || srcs.size() > 1 || (!dst.empty() && dst.back() == '/');
  std::string key_prefix;
  if (into_prefix) {
    *url = dst;
  } else {
    FERRY_ASSIGN_OR_RETURN(ObjectUrl u, SplitObjectUrl(dst));
    *url = u.parent;
    key_prefix = u.key;
  }
  std::set<std::string> keys;
  auto add = [&](std::string src, std::string key,
                 std::string root = "") -> Status {
    if (!keys.insert(key).second)
      return Status::InvalidArgument(key, "two files would be put here");
    items->push_back(PutItem{std::move(src), std::move(key), std::move(root)});
    return Status::OK();
  };
  for (const std::string& src : srcs) {
    FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(src));
    if (info.is_dir) {
      if (!a.recursive)
        return Status::InvalidArgument(src, "is a folder (use -R)");
      WalkOptions wo;
      wo.links_stay_inside = true;  // a planted link must not upload /etc
      FERRY_ASSIGN_OR_RETURN(WalkResult walk, WalkTree(env, src, wo));
      // Each file opened must still be below it (PutItem::root).
      FERRY_ASSIGN_OR_RETURN(std::string real_src, env->RealPath(src));
      for (const auto* list : {&walk.errors, &walk.skipped})
        for (const WalkProblem& p : *list)
          if (!IsFerryWorkingFile(p.path) && a.filters.Takes(p.path))
            problems->Add(JoinPath(src, p.path), p.status);
      // ferry's own working files (locks, state, downloads in progress,
      // views) never go up; a user's file named like one neither. Counted
      // and said once, not once each (a synced tree holds thousands).
      uint64_t working = 0;
      std::string example;
      for (const std::string& rel : walk.files) {
        if (!a.filters.Takes(rel)) continue;
        if (IsFerryWorkingFile(rel)) {
          if (working++ == 0) example = JoinPath(src, rel);
          continue;
        }
        FERRY_RETURN_IF_ERROR(add(JoinPath(src, rel), rel, real_src));
      }
      if (working > 0)
        problems->AddSkipped(working, example,
                             "named like ferry's working files "
                             "(never uploaded)");
      continue;
    }
    if (info.type != FileType::kRegular) {
      // A device, FIFO or pipe (/dev/stdin) has no size to upload: a
      // failed item, named (PutObjects refuses it too).
      problems->Add(src, Status::InvalidArgument(
                             src, std::string("not a regular file (") +
                                      FileTypeName(info.type) + ")"));
      continue;
    }
    FERRY_RETURN_IF_ERROR(add(src, into_prefix ? BaseName(src) : key_prefix));
  }
  return Status::OK();
}

int RunPut(PutArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  Env* env = Env::Default();
  if (a.args.size() < 2)
    return Fail(Status::InvalidArgument("put", "needs SRC... DST"));
  std::string url;
  std::vector<PutItem> items;
  SourceProblems problems(a.common.quiet);
  Status s = Plan(a, env, &url, &items, &problems);
  if (!s.ok()) return Fail(s);
  auto backend = OpenBackend(url, a.remote, env);
  if (!backend.ok()) return Fail(backend.status());
  if (a.dry_run) {
    std::string base = (*backend)->Describe();
    for (const PutItem& item : items)
      std::printf("put %s -> %s\n", Printable(item.src).c_str(),
                  Printable(RedactUrls(KeyUrl(base, item.key))).c_str());
    return ReportFailures(problems.failures);
  }
  TransferBar bar("put", items.size(), a.common.quiet || a.common.json);
  TransferOptions opt = TransferOptionsFrom(a.remote, false);
  opt.grow_parts = !a.part_size_given;
  opt.progress = [&](const TransferProgress& p) { bar.Update(p); };
  auto r = PutObjects(backend->get(), std::move(items), opt, env);
  if (!r.ok()) return Fail(r.status());
  problems.MoveInto(&*r);
  return ReportTransfer("put", *r, a.common.json, t0);
}

}  // namespace

Runner RegisterPut(CLI::App* app) {
  auto a = std::make_shared<PutArgs>();
  CLI::App* cmd = app->add_subcommand(
      "put",
      "Upload files (or trees with -R) to a remote: parallel, multipart "
      "above --part-size (without it, a big file's parts grow to about two "
      "per connection, up to 64 MiB).\n"
      "  ferry put shards/train-0000.tar s3://bucket/dataset/v1/\n"
      "  ferry put -R shards/ s3://bucket/dataset/v1/\n"
      "  ferry put model.bin file:///mnt/share/models/model.bin");
  AddCommonOptions(cmd, &a->common);
  AddRemoteOptions(cmd, &a->remote);
  CLI::Option* part_size = cmd->get_option("--part-size");
  cmd->add_option("args", a->args, "SRC... DST")->required()->expected(2, -1);
  cmd->add_flag("-R,--recursive", a->recursive,
                "Folders among SRC: every file below each");
  cmd->add_flag("--dry-run", a->dry_run, "Print what would be put");
  a->filters.AddOptions(cmd, "; with -R, on paths below each SRC folder");
  return [a, part_size] {
    a->part_size_given = part_size->count() > 0;
    return RunPut(*a);
  };
}

}  // namespace ferry::cli
