#include "ferry/convert.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "core/ordered_pipeline.h"
#include "ferry/atomic_file.h"
#include "ferry/hash.h"
#include "ferry/input.h"
#include "image/transcode_fields.h"

namespace ferry {
namespace {

constexpr char kStateFile[] = ".ferry-convert";
constexpr char kLockFile[] = ".ferry-convert.lock";

// Every option, from the one field list: a change of any of them makes
// existing outputs stale.
std::string Fingerprint(const image::TranscodeOptions& t) {
  return image::TranscodeFingerprint(t);
}

struct RunState {
  std::string fingerprint;
  int64_t epoch_ns = 0;  // outputs older than this predate the options
};

RunState ReadState(Env* env, const std::string& path) {
  RunState s;
  auto text = ReadFileToString(env, path);
  if (!text.ok()) return s;
  size_t nl = text->find('\n');
  if (nl == std::string::npos) return s;
  s.fingerprint = text->substr(0, nl);
  s.epoch_ns = std::strtoll(text->c_str() + nl + 1, nullptr, 10);
  return s;
}

struct Job {
  std::string in_rel, out_rel, in_path, out_path;
  // Decided by the scan (not an image, unreadable, name taken): no work.
  ConvertItem::Outcome preset = ConvertItem::Outcome::kConverted;
  Status why;
  bool single = false;  // one file named on the command line: always redone
};

// A converted item whose output waits, written but unpublished, for the
// batch commit (durable mode).
struct Done {
  ConvertItem item;
  // Detached, for the batch to publish (holds its temporary's lock).
  std::unique_ptr<AtomicFileWriter> detached;
  bool batched = false;  // detached went to the batch
};

Done ConvertOne(const Job& job, const ConvertOptions& o, int64_t epoch_ns) {
  Done done;
  ConvertItem& item = done.item;
  item.input = job.in_rel;
  item.output = job.out_rel;
  if (job.preset != ConvertItem::Outcome::kConverted) {
    item.outcome = job.preset;
    item.error = job.why;
    return done;
  }
  Env* env = o.env;
  auto in_info = env->Stat(job.in_path);
  if (!in_info.ok()) {
    item.error = in_info.status();
    return done;
  }
  item.input_bytes = in_info->size;
  if (!o.force && !job.single) {
    auto out_info = env->Stat(job.out_path);
    if (out_info.ok() && out_info->mtime_ns >= in_info->mtime_ns &&
        out_info->mtime_ns >= epoch_ns) {
      item.outcome = ConvertItem::Outcome::kUpToDate;
      item.output_bytes = out_info->size;
      return done;
    }
  }
  // A file named on the command line is sniffed here, before anything else
  // is read (a tree's files were sniffed by ScanInputs): a multi-GB
  // non-image costs 16 bytes, an image one allocation of its size.
  if (job.single) {
    auto head = ReadInputHead(env, job.in_path);
    if (!head.ok()) {
      item.error = head.status();
      return done;
    }
    InputVerdict verdict = ClassifyInput(*head, job.in_rel);
    if (verdict.cls != InputClass::kImage) {
      if (verdict.cls == InputClass::kSkip)
        item.outcome = ConvertItem::Outcome::kSkipped;
      item.error = verdict.why;
      return done;
    }
  }
  auto data =
      ReadInputFile(env, job.in_path, o.transcode.decode.limits.max_file_bytes);
  if (!data.ok()) {
    item.error = data.status();
    return done;
  }
  thread_local image::JpegEncoder encoder;
  auto jpeg = image::Transcode(*data, o.transcode, &encoder, &item.info);
  if (!jpeg.ok()) {
    item.error = jpeg.status();
    return done;
  }
  item.output_bytes = jpeg->size();
  if (o.dry_run) {
    item.outcome = ConvertItem::Outcome::kWouldConvert;
    return done;
  }
  Status s = env->CreateDirs(DirName(job.out_path));
  if (s.ok()) {
    auto w = AtomicFileWriter::Create(env, job.out_path);
    s = w.ok() ? (*w)->Append(*jpeg) : w.status();
    if (s.ok() && o.durable) {
      s = (*w)->Detach();  // published by the batch commit
      if (s.ok()) done.detached = std::move(*w);
    } else if (s.ok()) {
      s = (*w)->CommitWithoutSync();
    }
  }
  if (!s.ok()) {
    item.error = s;
    return done;
  }
  item.outcome = ConvertItem::Outcome::kConverted;
  return done;
}

}  // namespace

const char* OutcomeName(ConvertItem::Outcome o) {
  switch (o) {
    case ConvertItem::Outcome::kConverted:
      return "converted";
    case ConvertItem::Outcome::kUpToDate:
      return "up_to_date";
    case ConvertItem::Outcome::kSkipped:
      return "skipped";
    case ConvertItem::Outcome::kFailed:
      return "failed";
    case ConvertItem::Outcome::kWouldConvert:
      return "would_convert";
  }
  return "?";
}

std::string JpegOutputName(std::string_view input) {
  const size_t slash = input.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const size_t dot = input.rfind('.');
  // A leading dot (".hidden") starts the name, not an extension.
  const bool has_ext = dot != std::string_view::npos && dot > base;
  return std::string(has_ext ? input.substr(0, dot) : input) + ".jpg";
}

Result<ConvertSummary> ConvertTree(
    const std::string& src, const std::string& dst, const ConvertOptions& o,
    const std::function<void(const ConvertItem&)>& on_item) {
  Env* env = o.env;
  FERRY_ASSIGN_OR_RETURN(FileInfo src_info, env->Stat(src));
  if (src_info.type != FileType::kRegular && !src_info.is_dir) {
    return Status::InvalidArgument(src,
                                   std::string("not a file or directory (") +
                                       FileTypeName(src_info.type) + ")");
  }
  auto dst_info = env->Stat(dst);
  if (dst_info.ok() && dst_info->dev == src_info.dev &&
      dst_info->ino == src_info.ino) {
    return Status::InvalidArgument(
        dst, "is the source: the outputs would replace the inputs");
  }
  std::vector<Job> jobs;
  RunState state;
  std::unique_ptr<FileLock> lock;
  const std::string fingerprint = Fingerprint(o.transcode);
  if (!src_info.is_dir) {
    // One file: no lock, no state, no cleanup beside it (other converts may
    // write into the same folder at the same time). A folder (existing, or
    // named with a trailing '/') receives <folder>/<name>.jpg.
    std::string out = dst;
    if ((dst_info.ok() && dst_info->is_dir) ||
        (!dst.empty() && dst.back() == '/')) {
      const size_t slash = src.rfind('/');
      out = JoinPath(
          dst, JpegOutputName(slash == std::string::npos
                                  ? std::string_view(src)
                                  : std::string_view(src).substr(slash + 1)));
    }
    Job j;
    j.in_rel = j.in_path = src;
    j.out_rel = j.out_path = out;
    j.single = true;
    jobs.push_back(std::move(j));
    if (!o.dry_run) FERRY_RETURN_IF_ERROR(env->CreateDirs(DirName(out)));
  } else {
    if (!o.dry_run) {
      // Made before the walk, so that a destination inside the source is
      // known by identity and left out of the inputs.
      FERRY_RETURN_IF_ERROR(env->CreateDirs(dst));
      auto l = env->LockFile(JoinPath(dst, kLockFile), /*wait=*/false);
      if (!l.ok()) {
        return l.status().IsUnavailable()
                   ? Status::Unavailable(
                         dst, "another ferry convert is writing here")
                   : l.status();
      }
      lock = std::move(l).value();
    }
    InputScanOptions scan_options;
    scan_options.include_hidden = o.include_hidden;
    scan_options.exclude = {dst};
    scan_options.jobs = o.jobs;
    FERRY_ASSIGN_OR_RETURN(InputScan scan, ScanInputs(env, src, scan_options));
    // Output names are claimed by images only, in path order.
    std::map<std::string, std::string> claimed;
    for (std::string& rel : scan.images) {
      Job j;
      j.out_rel = JpegOutputName(rel);
      j.in_path = JoinPath(src, rel);
      j.out_path = JoinPath(dst, j.out_rel);
      auto [it, fresh] = claimed.emplace(j.out_rel, rel);
      if (!fresh) {
        j.preset = ConvertItem::Outcome::kFailed;
        j.why = Status::InvalidArgument("output " + j.out_rel +
                                        " is already made from " + it->second);
      }
      j.in_rel = std::move(rel);
      jobs.push_back(std::move(j));
    }
    auto add_preset = [&](std::vector<WalkProblem>& list,
                          ConvertItem::Outcome outcome) {
      for (WalkProblem& p : list) {
        Job j;
        j.in_rel = std::move(p.path);
        j.preset = outcome;
        j.why = std::move(p.status);
        jobs.push_back(std::move(j));
      }
    };
    add_preset(scan.skipped, ConvertItem::Outcome::kSkipped);
    add_preset(scan.failed, ConvertItem::Outcome::kFailed);
    // Reported in path order, whatever became of each.
    std::sort(jobs.begin(), jobs.end(),
              [](const Job& a, const Job& b) { return a.in_rel < b.in_rel; });
    if (!o.dry_run) {
      // Temporary files of a killed run: only ours (by name), only in the
      // folders this run writes, only of processes that are gone.
      std::set<std::string> dirs = {dst};
      for (const Job& j : jobs) {
        if (!j.out_path.empty()) dirs.insert(DirName(j.out_path));
      }
      for (const std::string& d : dirs) RemoveStaleTemps(env, d);
      const std::string state_path = JoinPath(dst, kStateFile);
      state = ReadState(env, state_path);
      if (state.fingerprint != fingerprint) {
        // The epoch is the state file's own mtime: file times come from the
        // kernel's coarse clock, which can lag the precise one by a tick, so
        // only a file time compares safely with later outputs' times.
        state.fingerprint = fingerprint;
        FERRY_RETURN_IF_ERROR(
            WriteFileAtomically(env, state_path, fingerprint + "\n"));
        FERRY_ASSIGN_OR_RETURN(FileInfo written, env->Stat(state_path));
        state.epoch_ns = written.mtime_ns;
        FERRY_RETURN_IF_ERROR(WriteFileAtomically(
            env, state_path,
            fingerprint + "\n" + std::to_string(state.epoch_ns) + "\n"));
      }
    } else {
      RunState old = ReadState(env, JoinPath(dst, kStateFile));
      state.epoch_ns =
          old.fingerprint == fingerprint ? old.epoch_ns : INT64_MAX;
    }
  }
  const std::string dst_dir = src_info.is_dir ? dst : DirName(jobs[0].out_path);

  Progress* progress = o.progress ? o.progress : NullProgress();
  progress->Begin("convert", jobs.size(), 0);
  ConvertSummary sum;
  auto report = [&](const ConvertItem& item) {
    switch (item.outcome) {
      case ConvertItem::Outcome::kConverted:
        ++sum.converted;
        sum.input_bytes += item.input_bytes;
        sum.output_bytes += item.output_bytes;
        break;
      case ConvertItem::Outcome::kUpToDate:
        ++sum.up_to_date;
        break;
      case ConvertItem::Outcome::kSkipped:
        ++sum.skipped;
        break;
      case ConvertItem::Outcome::kWouldConvert:
        ++sum.would_convert;
        break;
      case ConvertItem::Outcome::kFailed:
        ++sum.failed;
        break;
    }
    progress->Advance(1, item.input_bytes);
    on_item(item);
  };
  // Durable outputs are published in groups: one file-system sync for up to
  // kBatch files instead of an fsync each. Items are reported in input order
  // once their output is published; a killed run loses at most one batch.
  constexpr size_t kBatch = 64, kMaxQueued = 1024;
  AtomicBatch batch(env, dst_dir);
  std::vector<Done> queued;
  auto flush = [&] {
    std::vector<size_t> index;  // queued[] position of each batch entry
    for (size_t i = 0; i < queued.size(); ++i) {
      if (queued[i].batched) index.push_back(i);
    }
    batch.Commit([&](size_t k, const Status& s) {
      ConvertItem& item = queued[index[k]].item;
      if (!s.ok()) {
        item.outcome = ConvertItem::Outcome::kFailed;
        item.error = s;
      }
    });
    for (const Done& d : queued) report(d.item);
    queued.clear();
  };
  core::OrderedParallelMap<Done>(
      jobs.size(), o.jobs,
      [&](size_t i) { return ConvertOne(jobs[i], o, state.epoch_ns); },
      [&](size_t, Done done) {
        if (!done.detached && queued.empty()) {
          report(done.item);
          return;
        }
        if (done.detached) {
          batch.Add(std::move(done.detached));
          done.batched = true;
        }
        queued.push_back(std::move(done));
        if (batch.size() >= kBatch || queued.size() >= kMaxQueued) flush();
      });
  flush();
  progress->End();
  return sum;
}

}  // namespace ferry
