// What ferry sync does with a big manifest before any byte moves (issue 12:
// a 1,000,000-file manifest is read, diffed and planned in <= 2 s with
// <= 400 bytes of RSS per entry):
//   sync_plan_bench synth N DIR   writes DIR/v1 and DIR/v2: N synthetic
//                                 entries each (paths of ~33 bytes, random
//                                 hashes, 20-220 KB sizes); v2 changes 1%
//   sync_plan_bench plan DIR      reads v2 as sync does (sync::ReadManifest:
//                                 id, every rule, the path set), then the
//                                 recorded v1, selects (sync::Select), keeps
//                                 one key per (hash, size) as sync.cc does,
//                                 and diffs against v1's objects; prints the
//                                 time of each step and RSS per entry
//   sync_plan_bench bases DIR     block reuse's choice of other cached
//                                 objects (sync/cached_bases.h): v1 as the
//                                 one manifest a cache holds, v2 synced;
//                                 the time of reading it (the first Choose)
//                                 and of a Choose for each of v2's new
//                                 objects
//   sync_plan_bench renames N GONE DIR
//                                 renames' candidates (cached_bases.h): v1
//                                 of N shards of one size (the worst case:
//                                 every deleted path within the size
//                                 window), v2 renames GONE of them and
//                                 edits each at its start (no part shared);
//                                 the time of listing v2's paths (sync.cc),
//                                 reading v1 (the first Choose) and a Choose
//                                 for each renamed shard, and how many found
//                                 their own old object first
// Each step runs in its own process, so the peak RSS is the plan's own.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "formats/manifest/manifest.h"
#include "sync/cache.h"
#include "sync/cached_bases.h"
#include "sync/plan.h"

using namespace ferry;

namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

double CpuSeconds() {  // this process's user + system time
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

long StatusKb(const char* field) {  // VmRSS, VmHWM of this process
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(strlen(field)));
  return -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int Synth(uint64_t n, const std::string& dir) {
  for (int version = 1; version <= 2; ++version) {
    manifest::StringSink sink;
    manifest::ManifestWriter w(&sink);
    manifest::Header h;
    h.set_format_version(manifest::kFormatVersion);
    h.set_part_size(manifest::kDefaultPartSize);
    h.set_created_unix_s(1700000000 + version);
    Status s = w.Begin(h);
    manifest::File f;
    char path[64];
    uint64_t x = 88172645463325252u;
    for (uint64_t i = 0; i < n && s.ok(); ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      snprintf(path, sizeof path, "train/%04llu/sample-%08llu.jpg",
               static_cast<unsigned long long>(i / 10000),
               static_cast<unsigned long long>(i));
      uint64_t size = 20000 + x % 200000;
      std::string hash(16, '\0');
      for (int k = 0; k < 16; ++k) hash[k] = static_cast<char>(x >> (k * 4));
      if (version == 2 && i % 100 == 7) hash[0] ^= 1, size += 1;  // 1% new
      f.set_path(path);
      f.set_size(size);
      f.set_mode(0644);
      f.set_xxh3_128(hash);
      f.clear_part_xxh3_64();
      f.add_part_xxh3_64(x);
      s = w.Add(f);
    }
    Result<Hash128> id = s.ok() ? w.Finish() : Result<Hash128>(s);
    if (!id.ok()) {
      fprintf(stderr, "%s\n", id.status().ToString().c_str());
      return 1;
    }
    std::ofstream(dir + "/v" + std::to_string(version), std::ios::binary)
        << sink.bytes();
    std::ofstream(dir + "/v" + std::to_string(version) + ".id") << id->ToHex();
    printf("v%d: %llu entries, %zu bytes\n", version,
           static_cast<unsigned long long>(n), sink.bytes().size());
  }
  return 0;
}

Result<sync::ManifestInfo> Load(const std::string& dir, const char* name) {
  FERRY_ASSIGN_OR_RETURN(Hash128 id,
                         Hash128::FromHex(ReadAll(dir + "/" + name + ".id")));
  // Read as sync reads a cached manifest (sized from a stat, one copy).
  FERRY_ASSIGN_OR_RETURN(std::string bytes,
                         ReadFileToString(Env::Default(), dir + "/" + name,
                                          sync::kMaxManifestBytes));
  return sync::ReadManifest(bytes, id);  // bytes freed on return, as in sync
}

int Plan(const std::string& dir) {
  const long rss0 = StatusKb("VmRSS:");
  auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds();
  auto m2 = Load(dir, "v2");
  if (!m2.ok()) {
    fprintf(stderr, "%s\n", m2.status().ToString().c_str());
    return 1;
  }
  const double read_s = Seconds(t0);
  auto t1 = std::chrono::steady_clock::now();
  const double c1 = CpuSeconds();
  auto m1 = Load(dir, "v1");  // DEST's recorded version (its cached manifest)
  if (!m1.ok()) return 1;
  const double read_old_s = Seconds(t1);
  const double read_old_cpu = CpuSeconds() - c1;
  auto t2 = std::chrono::steady_clock::now();
  // As sync.cc: this rank's files, one key per (hash, size).
  std::vector<sync::Entry> files =
      sync::Select(std::move(m2->files), SyncSelection{});
  std::vector<std::pair<Hash128, uint64_t>> keys;
  for (size_t i : sync::UniqueObjects(files))
    keys.emplace_back(files[i].hash, files[i].size);
  const double plan_s = Seconds(t2);
  // The diff: objects of the new version the recorded one did not have.
  auto t3 = std::chrono::steady_clock::now();
  std::vector<std::pair<Hash128, uint64_t>> old;
  old.reserve(m1->files.size());
  for (const sync::Entry& e : m1->files) old.emplace_back(e.hash, e.size);
  auto less = [](const std::pair<Hash128, uint64_t>& a,
                 const std::pair<Hash128, uint64_t>& b) {
    if (a.first.high != b.first.high) return a.first.high < b.first.high;
    if (a.first.low != b.first.low) return a.first.low < b.first.low;
    return a.second < b.second;
  };
  std::sort(old.begin(), old.end(), less);
  std::vector<std::pair<Hash128, uint64_t>> want = keys;
  std::sort(want.begin(), want.end(), less);
  size_t missing = 0;
  for (size_t a = 0, b = 0; a < want.size(); ++a) {  // merge: sorted both
    while (b < old.size() && less(old[b], want[a])) ++b;
    missing += b == old.size() || less(want[a], old[b]);
  }
  const double diff_s = Seconds(t3);
  const long hwm = StatusKb("VmHWM:");
  // CPU time of read + diff + plan (the recorded manifest's read is the
  // cache's job in sync: not counted), immune to the machine's load.
  const double cpu = CpuSeconds() - c0 - read_old_cpu;
  const size_t n = files.size();
  printf(
      "{\"entries\":%zu,\"read_s\":%.3f,\"read_recorded_s\":%.3f,"
      "\"plan_s\":%.3f,\"diff_s\":%.3f,\"total_s\":%.3f,\"objects\":%zu,"
      "\"missing\":%zu,\"rss_start_kb\":%ld,\"peak_rss_kb\":%ld,"
      "\"bytes_per_entry\":%.0f,\"read_diff_plan_cpu_s\":%.3f}\n",
      n, read_s, read_old_s, plan_s, diff_s, Seconds(t0), keys.size(), missing,
      rss0, hwm, (hwm - rss0) * 1024.0 / n, cpu);
  return 0;
}

int Bases(const std::string& dir) {
  auto id1 = Hash128::FromHex(ReadAll(dir + "/v1.id"));
  if (!id1.ok()) return 1;
  auto cache = sync::Cache::Open(Env::Default(), dir + "/cache");
  if (!cache.ok()) {
    fprintf(stderr, "%s\n", cache.status().ToString().c_str());
    return 1;
  }
  Env* env = Env::Default();
  if (!env->CreateDirs(dir + "/cache/manifests").ok()) return 1;
  std::ofstream((*cache)->ManifestPath(*id1), std::ios::binary)
      << ReadAll(dir + "/v1");
  auto m2 = Load(dir, "v2");
  if (!m2.ok()) return 1;
  auto m1 = Load(dir, "v1");
  if (!m1.ok()) return 1;
  std::vector<const sync::Entry*> fresh;  // v2's objects v1 lacks
  {
    std::vector<std::pair<uint64_t, uint64_t>> old;
    for (const sync::Entry& e : m1->files)
      old.emplace_back(e.hash.high, e.hash.low);
    std::sort(old.begin(), old.end());
    for (const sync::Entry& e : m2->files)
      if (!std::binary_search(old.begin(), old.end(),
                              std::make_pair(e.hash.high, e.hash.low)))
        fresh.push_back(&e);
  }
  const long rss0 = StatusKb("VmRSS:");
  sync::CachedBases bases(env, cache->get(), std::string(32, '0'), &*m2, {});
  auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds();
  size_t named = 0;
  double first_s = 0;
  for (const sync::Entry* e : fresh) {
    named += bases.Choose(sync::CacheKey{"", e->hash, e->size}, *e).size();
    if (first_s == 0) first_s = Seconds(t0);
  }
  const double total_s = Seconds(t0), cpu = CpuSeconds() - c0;
  printf(
      "{\"entries\":%zu,\"manifests_read\":%zu,\"postings\":%zu,"
      "\"load_and_first_choose_s\":%.4f,\"chooses\":%zu,\"total_s\":%.4f,"
      "\"cpu_s\":%.4f,\"us_per_later_choose\":%.2f,\"candidates_named\":%zu,"
      "\"rss_growth_kb\":%ld}\n",
      m1->files.size(), bases.manifests_read(), bases.postings(), first_s,
      fresh.size(), total_s, cpu,
      fresh.size() > 1 ? (total_s - first_s) * 1e6 / (fresh.size() - 1) : 0.0,
      named, StatusKb("VmRSS:") - rss0);
  return 0;
}

// One manifest of n shards; version 2 renames and edits the first gone of
// every n / gone (shard i -> shard-i-v2.tar, 300 bytes longer, new hashes).
Result<std::pair<Hash128, std::string>> RenamesManifest(uint64_t n,
                                                        uint64_t gone,
                                                        int version) {
  manifest::StringSink sink;
  manifest::ManifestWriter w(&sink);
  manifest::Header h;
  h.set_format_version(manifest::kFormatVersion);
  h.set_part_size(manifest::kDefaultPartSize);
  h.set_created_unix_s(1700000000 + version);
  FERRY_RETURN_IF_ERROR(w.Begin(h));
  const uint64_t every = gone ? n / gone : n + 1;
  std::vector<manifest::File> files;
  for (uint64_t i = 0; i < n; ++i) {
    const bool renamed = version == 2 && i % every == 0 && i / every < gone;
    char path[64];
    snprintf(path, sizeof path, "train/%02llu/shard-%06llu%s.tar",
             static_cast<unsigned long long>(i / 1000),
             static_cast<unsigned long long>(i), renamed ? "-v2" : "");
    manifest::File f;
    f.set_path(path);
    const uint64_t size = (uint64_t{256} << 20) + (renamed ? 300 : 0);
    f.set_size(size);
    f.set_mode(0644);
    uint64_t x = i * 0x9E3779B97F4A7C15u + (renamed ? 77 : 0) + 1;
    std::string hash(16, '\0');
    for (int k = 0; k < 16; ++k) hash[k] = static_cast<char>(x >> (k * 4));
    f.set_xxh3_128(hash);
    for (uint64_t p = 0; p < manifest::PartCount(size, h.part_size()); ++p)
      f.add_part_xxh3_64(x * 31 + p);
    files.push_back(std::move(f));
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.path() < b.path(); });
  for (const manifest::File& f : files) FERRY_RETURN_IF_ERROR(w.Add(f));
  FERRY_ASSIGN_OR_RETURN(Hash128 id, w.Finish());
  return std::make_pair(id, sink.bytes());
}

int Renames(uint64_t n, uint64_t gone, const std::string& dir) {
  Env* env = Env::Default();
  auto v1 = RenamesManifest(n, gone, 1);
  auto v2 = RenamesManifest(n, gone, 2);
  if (!v1.ok() || !v2.ok()) return 1;
  auto cache = sync::Cache::Open(env, dir + "/cache");
  if (!cache.ok() || !env->CreateDirs(dir + "/cache/manifests").ok()) return 1;
  std::ofstream((*cache)->ManifestPath(v1->first), std::ios::binary)
      << v1->second;
  auto m1 = sync::ReadManifest(v1->second, v1->first);
  auto m2 = sync::ReadManifest(v2->second, v2->first);
  if (!m1.ok() || !m2.ok()) return 1;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> listed;  // as sync.cc
  listed.reserve(m2->files.size());
  for (const sync::Entry& e : m2->files)
    listed.push_back(sync::CachedBases::PathHash(e.path));
  std::sort(listed.begin(), listed.end());
  const double listed_s = Seconds(t0);
  const std::string rk(32, '0');
  sync::CachedBases bases(env, cache->get(), rk, &*m2, {v1->first},
                          std::move(listed));
  std::vector<const sync::Entry*> fresh;  // the renamed ones
  for (const sync::Entry& e : m2->files)
    if (e.path.find("-v2.tar") != std::string::npos) fresh.push_back(&e);
  std::vector<std::string> own;  // each one's old object, in the cache
  for (const sync::Entry* e : fresh) {
    std::string old = e->path;
    old.erase(old.size() - 7) += ".tar";
    own.emplace_back();
    for (const sync::Entry& o : m1->files)
      if (o.path == old)
        own.back() = (*cache)->ObjectPath(sync::CacheKey{rk, o.hash, o.size});
  }
  auto t1 = std::chrono::steady_clock::now();
  const double c0 = CpuSeconds();
  size_t named = 0, own_first = 0;
  double first_s = 0, first_cpu = 0;
  for (size_t i = 0; i < fresh.size(); ++i) {
    const sync::Entry* e = fresh[i];
    auto got = bases.Choose(sync::CacheKey{rk, e->hash, e->size}, *e);
    named += got.size();
    own_first += !got.empty() && got[0] == own[i];
    if (first_s == 0) first_s = Seconds(t1), first_cpu = CpuSeconds() - c0;
  }
  const double total_s = Seconds(t1), cpu = CpuSeconds() - c0;
  printf(
      "{\"entries\":%zu,\"renamed\":%zu,\"gone_kept\":%zu,"
      "\"listed_s\":%.4f,\"load_and_first_choose_s\":%.4f,"
      "\"chooses_s\":%.4f,\"cpu_s\":%.4f,\"us_per_later_choose\":%.2f,"
      "\"candidates_named\":%zu,\"own_object_first\":%zu,"
      "\"load_cpu_s\":%.4f,\"cpu_us_per_later_choose\":%.2f}\n",
      m1->files.size(), fresh.size(), bases.gone(), listed_s, first_s, total_s,
      cpu,
      fresh.size() > 1 ? (total_s - first_s) * 1e6 / (fresh.size() - 1) : 0.0,
      named, own_first, first_cpu,
      fresh.size() > 1 ? (cpu - first_cpu) * 1e6 / (fresh.size() - 1) : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "synth" && argc == 4) return Synth(std::stoull(argv[2]), argv[3]);
  if (cmd == "plan" && argc == 3) return Plan(argv[2]);
  if (cmd == "bases" && argc == 3) return Bases(argv[2]);
  if (cmd == "renames" && argc == 5)
    return Renames(std::stoull(argv[2]), std::stoull(argv[3]), argv[4]);
  fprintf(stderr,
          "usage: sync_plan_bench synth N DIR | plan DIR | bases DIR | "
          "renames N GONE DIR\n");
  return 2;
}
