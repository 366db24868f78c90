// ferry split: deterministic train/val/test lists for a tree or a listing.
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "ferry/json.h"
#include "ferry/split.h"
#include "options.h"

namespace ferry::cli {
namespace {

struct SplitCmdArgs {
  CommonOptions common;
  SplitArgs split;
  std::string src, out, list;
  bool no_hash = false, dry_run = false, include_hidden = false;
};

int RunSplit(const SplitCmdArgs& a) {
  SplitSpec spec;
  Status valid = FillSplitSpec(a.split, &spec);
  if (!valid.ok()) return Fail(valid);
  if (a.src.empty() && a.list.empty())
    return Fail(Status::InvalidArgument("give SRC or --list"));

  Env* env = Env::Default();
  TreeItems tree;
  if (a.list.empty()) {
    InputScanOptions scan;
    scan.include_hidden = a.include_hidden;
    scan.exclude = {a.out};
    scan.jobs = a.common.ResolvedJobs();
    auto t = ItemsFromTree(env, a.src, scan);
    if (!t.ok()) return Fail(t.status());
    tree = std::move(t).value();
  } else {
    auto listed = ItemsFromList(env, a.list);
    if (!listed.ok()) return Fail(listed.status());
    tree.items = std::move(listed).value();
  }
  // Not inputs (not images, hidden, special, no class): counted, listed
  // with -v. Unreadable entries fail the run (exit 1) after the rest is done.
  if (a.common.verbose && !a.common.json) {
    for (const WalkProblem& p : tree.skipped) {
      std::fprintf(stderr, "%s: skipped: %s\n", p.path.c_str(),
                   std::string(p.status.message()).c_str());
    }
  }
  if (!a.common.json) {
    for (const WalkProblem& p : tree.failed) {
      std::fprintf(stderr, "ferry: %s: %s\n", p.path.c_str(),
                   p.status.ToString().c_str());
    }
  }
  const std::vector<SplitItem>* items = &tree.items;
  // Contents are hashed (for leakage and --dedup) when the files are at hand.
  std::vector<Hash128> hashes;
  if (!a.no_hash && !a.src.empty()) {
    auto h = HashItemContents(env, a.src, *items, a.common.ResolvedJobs());
    if (!h.ok()) return Fail(h.status());
    hashes = std::move(h).value();
  } else if (spec.dedup) {
    return Fail(Status::InvalidArgument(
        "--dedup needs the files: give SRC (and no --no-hash)"));
  }
  auto r = AssignSplits(*items, spec, hashes);
  if (!r.ok()) return Fail(r.status());
  if (!a.dry_run) {
    Status s = WriteSplit(env, a.out, *items, spec, *r);
    if (!s.ok()) return Fail(s);
  }

  if (!r->leaks.empty() && !a.common.json) {
    std::fprintf(stderr,
                 "ferry split: WARNING: %zu sets of identical files are in "
                 "more than one split",
                 r->leaks.size());
    std::fprintf(stderr,
                 " (see split.json; --dedup keeps each set together), e.g.:\n");
    for (size_t i : r->leaks[0].items) {
      std::fprintf(stderr, "  %s (%s)\n", (*items)[i].path.c_str(),
                   r->names[r->assignment[i]].c_str());
    }
  }
  if (a.common.json) {
    JsonWriter j(stdout);
    j.BeginObject().Key("command").String("split").Key("items").Uint(
        items->size());
    j.Key("splits").BeginObject();
    for (size_t s = 0; s < r->names.size(); ++s) {
      uint64_t total = 0;
      for (uint64_t c : r->counts[s]) total += c;
      j.Key(r->names[s]).Uint(total);
    }
    j.EndObject()
        .Key("classes")
        .Uint(r->classes.size())
        .Key("leakage_checked")
        .Bool(r->hashed);
    j.Key("cross_split_duplicate_sets").Uint(r->leaks.size());
    j.Key("skipped").Uint(tree.skipped.size()).Key("failed").BeginArray();
    for (const WalkProblem& p : tree.failed) {
      j.BeginObject()
          .Key("path")
          .String(p.path)
          .Key("error")
          .String(p.status.ToString())
          .EndObject();
    }
    j.EndArray().EndObject();
  } else if (!a.common.quiet) {
    std::fprintf(stderr,
                 "ferry split: %zu items (%zu skipped, not images; %zu "
                 "failed), %zu classes ->",
                 items->size(), tree.skipped.size(), tree.failed.size(),
                 r->classes.size());
    for (size_t s = 0; s < r->names.size(); ++s) {
      uint64_t total = 0;
      for (uint64_t c : r->counts[s]) total += c;
      std::fprintf(stderr, " %s %llu", r->names[s].c_str(),
                   (unsigned long long)total);
    }
    std::fprintf(stderr, "%s\n",
                 a.dry_run ? " (dry run, nothing written)" : "");
  }
  return tree.failed.empty() ? kExitOk : kExitItemsFailed;
}

}  // namespace

Runner RegisterSplit(CLI::App* app) {
  auto a = std::make_shared<SplitCmdArgs>();
  CLI::App* cmd = app->add_subcommand(
      "split", "Deterministic train/val/test lists (stratified, grouped)");
  cmd->footer(
      "Examples:\n"
      "  ferry split data/ --out splits/                      # 7:2:1 by class "
      "folder\n"
      "  ferry split data/ --out s/ --group-by '^([^/]+/scene-[0-9]+)_' "
      "--dedup\n"
      "  ferry split --list items.csv --out s/ --ratios 8:1:1 --split-mode "
      "exact\n"
      "Writes <out>/<name>.txt (sorted paths) and <out>/split.json.");
  cmd->add_option(
      "src", a->src,
      "Class-folder tree (also where listed files are, for hashing)");
  cmd->add_option("-o,--out", a->out, "Output directory")->required();
  cmd->add_option("--list", a->list,
                  "CSV (path,label,group) or JSONL listing instead of a tree");
  AddSplitOptions(cmd, &a->split);
  AddIncludeHiddenFlag(cmd, &a->include_hidden);
  cmd->add_flag("--no-hash", a->no_hash,
                "Do not read files (no leakage check)");
  cmd->add_flag("-n,--dry-run", a->dry_run,
                "Compute and report; write nothing");
  AddCommonOptions(cmd, &a->common);
  return [a] { return RunSplit(*a); };
}

}  // namespace ferry::cli
