// ferry split: deterministic train/val/test lists for a tree or a listing.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

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

// " train 84 (70.0% of 70%)" for every split.
std::string Shares(const SplitResult& r, const SplitSpec& spec) {
  double ratio_sum = 0;
  for (double v : spec.ratios) ratio_sum += v;
  uint64_t all = 0;
  std::vector<uint64_t> total(r.names.size(), 0);
  for (size_t s = 0; s < r.names.size(); ++s) {
    for (uint64_t c : r.counts[s]) total[s] += c;
    all += total[s];
  }
  std::string out;
  char buf[256];
  for (size_t s = 0; s < r.names.size(); ++s) {
    std::snprintf(buf, sizeof(buf), " %s %llu (%.1f%% of %.3g%%)",
                  Printable(r.names[s]).c_str(), (unsigned long long)total[s],
                  all ? 100.0 * total[s] / all : 0.0,
                  100.0 * spec.ratios[s] / ratio_sum);
    out += buf;
  }
  return out;
}

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
      std::fprintf(stderr, "%s: skipped: %s\n", Printable(p.path).c_str(),
                   Printable(p.status.message()).c_str());
    }
  }
  if (!a.common.json) {
    for (const WalkProblem& p : tree.failed) {
      std::fprintf(stderr, "ferry: %s: %s\n", Printable(p.path).c_str(),
                   Printable(p.status.ToString()).c_str());
    }
  }
  const std::vector<SplitItem>* items = &tree.items;
  // Contents are hashed (for leakage and duplicates) when the files are at
  // hand; without them duplicates cannot be known.
  std::vector<Hash128> hashes;
  if (!a.no_hash && !a.src.empty()) {
    auto h = HashItemContents(env, a.src, *items, a.common.ResolvedJobs());
    if (!h.ok()) return Fail(h.status());
    hashes = std::move(h).value();
  } else if (spec.duplicates == DuplicatePolicy::kDrop) {
    return Fail(Status::InvalidArgument(
        "--drop-duplicates needs the files: give SRC (and no --no-hash)"));
  }
  PreviousAssignment earlier;
  auto previous = LoadEarlierAssignment(env, spec, a.out, *items, &earlier);
  if (!previous.ok()) return Fail(previous.status());
  auto r = AssignSplits(*items, spec, hashes, *previous);
  if (!r.ok()) return Fail(r.status());
  if (!a.dry_run) {
    Status s = WriteSplit(env, a.out, *items, spec, *r);
    if (!s.ok()) return Fail(s);
  }

  if (!r->leaks.empty() && !a.common.json && !a.common.quiet) {
    std::fprintf(stderr,
                 "ferry split: %s: %zu sets of identical files are in "
                 "more than one split",
                 spec.duplicates == DuplicatePolicy::kAllowLeakage
                     ? "note (--allow-leakage)"
                     : "WARNING",
                 r->leaks.size());
    std::fprintf(stderr, " (see split.json), e.g.:\n");
    for (size_t i : r->leaks[0].items) {
      std::fprintf(stderr, "  %s (%s)\n", Printable((*items)[i].path).c_str(),
                   Printable(r->names[r->assignment[i]]).c_str());
    }
  }
  if (a.common.json) {
    JsonWriter j(stdout);
    j.BeginObject().Key("command").String("split").Key("items").Uint(
        items->size() - r->dropped.size());
    j.Key("mode").String(SplitModeName(spec.mode));
    j.Key("kept_from_earlier_assignment").Uint(r->kept_items);
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
    j.Key("dropped_duplicates").Uint(r->dropped.size());
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
                 "ferry split: %zu items (%zu skipped, not inputs; %zu "
                 "failed), %zu classes ->%s",
                 items->size() - r->dropped.size(), tree.skipped.size(),
                 tree.failed.size(), r->classes.size(),
                 Shares(*r, spec).c_str());
    if (!r->dropped.empty())
      std::fprintf(stderr, "; %zu duplicates dropped", r->dropped.size());
    if (!previous->empty()) {
      std::fprintf(stderr, "; %llu kept their earlier split",
                   (unsigned long long)r->kept_items);
      if (earlier.unknown_split > 0) {
        std::fprintf(stderr, " (%llu from splits no longer named placed anew)",
                     (unsigned long long)earlier.unknown_split);
      }
    }
    if (!r->hashed) std::fprintf(stderr, "; duplicates not checked");
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
      "  ferry split data/ --out s/ --group-by '^([^/]+/scene-[0-9]+)_'\n"
      "  ferry split data/ --out s2/ --previous s/   # grown data, keep s's "
      "items\n"
      "  ferry split --list items.csv --out s/ --ratios 8:1:1 --split-mode "
      "exact\n"
      "Writes <out>/<name>.txt (sorted paths), <out>/split.json and "
      "<out>/assignment.tsv.zst, as one unit.");
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
