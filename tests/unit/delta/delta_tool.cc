// A small driver of lib/delta for the rdiff interop test and the bench,
// with rdiff's argument order:
//   delta_tool signature BASIS SIG
//   delta_tool delta SIG NEW DELTA        (SIG made by anyone: checked)
//   delta_tool patch BASIS DELTA OUT [MAX_OUTPUT]
//   delta_tool parts NEW PARTS            (NEW's part size and XXH3-64 per
//       part, as publish puts them in a manifest: one number a line)
//   delta_tool match SIG NEW_SIZE MAP BASIS...   (block reuse: MAP gets one
//       line "block basis offset" per block found; FERRY_MATCH_THREADS,
//       FERRY_MATCH_PLAIN=1: the plain rolling scan, FERRY_MATCH_EXHAUSTIVE=1,
//       FERRY_MATCH_GAP, FERRY_MATCH_PARTS=PARTS: the new object's part
//       hashes, as sync has them from the manifest)
// Prints one JSON line (bytes in, out, seconds); exit 0 ok, 3 Corruption
// (a refused signature or delta), 1 anything else, 2 usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ferry/delta.h"
#include "formats/manifest/manifest.h"

using namespace ferry;

namespace {

int Exit(const Status& s) {
  if (s.ok()) return 0;
  fprintf(stderr, "delta_tool: %s\n", s.ToString().c_str());
  return s.IsCorruption() ? 3 : 1;
}

uint64_t EnvNumber(const char* name, uint64_t otherwise) {
  const char* v = getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : otherwise;
}

// PARTS (from `parts`): the part size, then the hashes.
Status LoadParts(Env* env, const std::string& path, uint64_t* part_size,
                 std::vector<uint64_t>* hashes) {
  FERRY_ASSIGN_OR_RETURN(std::string text, ReadFileToString(env, path));
  const char* p = text.c_str();
  char* end;
  for (uint64_t v = std::strtoull(p, &end, 10); end != p;
       v = std::strtoull(p, &end, 10)) {
    hashes->push_back(v);
    p = end;
  }
  if (hashes->empty()) return Status::InvalidArgument(path, "no part size");
  *part_size = hashes->front();
  hashes->erase(hashes->begin());
  return Status::OK();
}

// Block reuse: the map to `map_path`, a summary on stdout.
Status Match(int argc, char** argv, uint64_t* in, std::string* json) {
  Env* env = Env::Default();
  uint64_t size = std::strtoull(argv[3], nullptr, 10);
  delta::SignatureLimits limits;
  limits.file_size = static_cast<int64_t>(size);
  FERRY_ASSIGN_OR_RETURN(auto sig,
                         delta::LoadSignatureFile(env, argv[2], limits));
  std::vector<std::string> bases(argv + 5, argv + argc);
  delta::BlockMatchOptions opt;
  opt.threads = static_cast<int>(EnvNumber("FERRY_MATCH_THREADS", 0));
  opt.aligned_fast_path = EnvNumber("FERRY_MATCH_PLAIN", 0) == 0;
  opt.exhaustive = EnvNumber("FERRY_MATCH_EXHAUSTIVE", 0) != 0;
  std::vector<uint64_t> parts;
  if (const char* parts_path = getenv("FERRY_MATCH_PARTS")) {
    FERRY_RETURN_IF_ERROR(LoadParts(env, parts_path, &opt.part_size, &parts));
    opt.part_hashes = parts;
  }
  delta::BlockMatchStats stats;
  FERRY_ASSIGN_OR_RETURN(
      auto map, delta::MatchBlocks(*sig, size, env, bases, opt, &stats));
  *in = stats.basis_bytes;
  std::string lines;
  for (size_t i = 0; i < map.blocks.size(); ++i)
    if (map.blocks[i].found())
      lines += std::to_string(i) + " " + std::to_string(map.blocks[i].basis) +
               " " + std::to_string(map.blocks[i].offset) + "\n";
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(argv[4]));
  FERRY_RETURN_IF_ERROR(file->Append(lines));
  FERRY_RETURN_IF_ERROR(file->Close());
  delta::BlockPlan plan =
      delta::PlanRanges(map, EnvNumber("FERRY_MATCH_GAP", 0));
  *json = ",\"found_bytes\":" + std::to_string(map.found_bytes()) +
          ",\"fetches\":" + std::to_string(plan.fetches.size()) +
          ",\"fetch_bytes\":" + std::to_string(plan.fetch_bytes) +
          ",\"copies\":" + std::to_string(plan.copies.size()) +
          ",\"rolled_bytes\":" + std::to_string(stats.rolled_bytes) +
          ",\"strong_sums\":" + std::to_string(stats.strong_sums) +
          ",\"parts_hashed\":" + std::to_string(stats.parts_hashed) +
          ",\"part_bytes\":" + std::to_string(stats.part_bytes);
  return Status::OK();
}

Status Run(int argc, char** argv, uint64_t* in, uint64_t* out) {
  Env* env = Env::Default();
  std::string op = argv[1];
  std::string out_path = argv[argc == 6 ? 4 : argc - 1];
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(out_path));
  delta::ByteSink sink = [&](std::string_view d) {
    *out += d.size();
    return file->Append(d);
  };
  if (op == "signature") {
    FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(argv[2]));
    *in = info.size;
    FERRY_RETURN_IF_ERROR(delta::SignFile(env, argv[2], sink));
  } else if (op == "parts") {
    FERRY_ASSIGN_OR_RETURN(auto in_file, env->NewSequentialFile(argv[2]));
    manifest::FileHasher hasher(manifest::kDefaultPartSize);
    std::vector<char> buf(1 << 20);
    for (std::string_view got;;) {
      FERRY_RETURN_IF_ERROR(in_file->Read(buf.size(), &got, buf.data()));
      if (got.empty()) break;
      hasher.Update(got);
    }
    manifest::File entry;
    hasher.Finish(&entry);
    *in = hasher.size();
    std::string text = std::to_string(manifest::kDefaultPartSize) + "\n";
    for (uint64_t h : entry.part_xxh3_64()) text += std::to_string(h) + "\n";
    FERRY_RETURN_IF_ERROR(sink(text));
  } else if (op == "delta") {
    FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(argv[3]));
    *in = info.size;
    FERRY_ASSIGN_OR_RETURN(auto sig,
                           delta::LoadSignatureFile(env, argv[2], {}));
    FERRY_RETURN_IF_ERROR(delta::DeltaFile(*sig, env, argv[3], sink));
  } else {
    uint64_t max =
        argc == 6 ? std::strtoull(argv[5], nullptr, 10) : uint64_t{1} << 50;
    FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(argv[3]));
    *in = info.size;
    FERRY_RETURN_IF_ERROR(
        delta::PatchFile(env, argv[2], argv[3], max, sink).status());
  }
  return file->Close();
}

}  // namespace

int main(int argc, char** argv) {
  std::string op = argc > 1 ? argv[1] : "";
  bool usage = !((op == "signature" && argc == 4) ||
                 (op == "parts" && argc == 4) || (op == "delta" && argc == 5) ||
                 (op == "patch" && (argc == 5 || argc == 6)) ||
                 (op == "match" && argc >= 6));
  if (usage) {
    fprintf(stderr,
            "usage: delta_tool signature BASIS SIG | parts NEW PARTS | "
            "delta SIG NEW DELTA | "
            "patch BASIS DELTA OUT [MAX_OUTPUT] | match SIG NEW_SIZE MAP "
            "BASIS...\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  uint64_t in = 0, out = 0;
  std::string extra;
  Status s = op == "match" ? Match(argc, argv, &in, &extra)
                           : Run(argc, argv, &in, &out);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (s.ok())
    printf(
        "{\"op\":\"%s\",\"in_bytes\":%llu,\"out_bytes\":%llu,"
        "\"seconds\":%.3f%s}\n",
        op.c_str(), static_cast<unsigned long long>(in),
        static_cast<unsigned long long>(out), secs, extra.c_str());
  return Exit(s);
}
