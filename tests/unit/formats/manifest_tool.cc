// A small driver of formats/manifest for the Python oracle and the bench:
//   manifest_tool hash-dir DIR OUT PART_SIZE   hash a tree, write its manifest
//   manifest_tool synth N OUT                  N synthetic entries (bench)
//   manifest_tool read FILE [ID]               read it streaming, print counts
// Prints one JSON line; exit 0 ok, 3 Corruption, 1 anything else.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/manifest/manifest.h"

namespace fs = std::filesystem;
using namespace ferry;
using namespace ferry::manifest;

namespace {

class FileSink : public Sink {
 public:
  explicit FileSink(FILE* f) : f_(f) {}
  Status Append(std::string_view data) override {
    if (fwrite(data.data(), 1, data.size(), f_) != data.size()) {
      return Status::IOError("write failed");
    }
    return Status::OK();
  }

 private:
  FILE* f_;
};

class FileSource : public Source {
 public:
  explicit FileSource(FILE* f) : f_(f) {}
  Status Read(size_t n, std::string_view* got, char* scratch) override {
    size_t r = fread(scratch, 1, n, f_);
    if (r == 0 && ferror(f_)) return Status::IOError("read failed");
    *got = std::string_view(scratch, r);
    return Status::OK();
  }

 private:
  FILE* f_;
};

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

int Exit(const Status& s) {
  if (s.ok()) return 0;
  fprintf(stderr, "manifest_tool: %s\n", s.ToString().c_str());
  return s.IsCorruption() ? 3 : 1;
}

Header MakeHeader(uint64_t part_size) {
  Header h;
  h.set_format_version(kFormatVersion);
  h.set_created_unix_s(1700000000);
  h.set_ferry_version("manifest_tool");
  h.set_message("oracle");
  h.set_part_size(part_size);
  return h;
}

int HashDir(const std::string& dir, const std::string& out, uint64_t part) {
  std::vector<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) {
      paths.push_back(fs::relative(e.path(), dir).generic_string());
    }
  }
  std::sort(paths.begin(), paths.end());  // bytewise: char_traits<char>
  FILE* f = fopen(out.c_str(), "wb");
  if (!f) return 1;
  FileSink sink(f);
  ManifestWriter w(&sink);
  Status s = w.Begin(MakeHeader(part));
  std::vector<char> buf(3331);  // odd chunks: parts straddle reads
  for (const std::string& p : paths) {
    if (!s.ok()) break;
    const std::string full = dir + "/" + p;
    std::ifstream in(full, std::ios::binary);
    FileHasher h(part);
    while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
      h.Update(std::string_view(buf.data(), in.gcount()));
    }
    File file;
    h.Finish(&file);
    file.set_path(p);
    struct stat st;
    stat(full.c_str(), &st);
    file.set_mode(st.st_mode & 0777);
    s = w.Add(file);
  }
  Result<Hash128> id = s.ok() ? w.Finish() : Result<Hash128>(s);
  fclose(f);
  if (!id.ok()) return Exit(id.status());
  printf("{\"id\":\"%s\",\"files\":%zu}\n", id->ToHex().c_str(), paths.size());
  return 0;
}

int Synth(uint64_t n, const std::string& out) {
  auto t0 = std::chrono::steady_clock::now();
  FILE* f = fopen(out.c_str(), "wb");
  if (!f) return 1;
  FileSink sink(f);
  ManifestWriter w(&sink);
  Status s = w.Begin(MakeHeader(kDefaultPartSize));
  File file;
  char path[64];
  uint64_t x = 88172645463325252u;
  for (uint64_t i = 0; i < n && s.ok(); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift: incompressible
    snprintf(path, sizeof path, "train/%04llu/sample-%08llu.jpg",
             static_cast<unsigned long long>(i / 10000),
             static_cast<unsigned long long>(i));
    const uint64_t size = 20000 + x % 200000;
    file.set_path(path);
    file.set_size(size);
    file.set_mode(0644);
    std::string hash(16, '\0');
    for (int k = 0; k < 16; ++k) hash[k] = static_cast<char>(x >> (k * 4));
    file.set_xxh3_128(hash);
    file.clear_part_xxh3_64();
    for (uint64_t p = 0; p < PartCount(size, kDefaultPartSize); ++p) {
      file.add_part_xxh3_64(x + p);
    }
    s = w.Add(file);
  }
  Result<Hash128> id = s.ok() ? w.Finish() : Result<Hash128>(s);
  fclose(f);
  if (!id.ok()) return Exit(id.status());
  printf("{\"id\":\"%s\",\"files\":%llu,\"bytes\":%llu,\"write_s\":%.3f}\n",
         id->ToHex().c_str(), static_cast<unsigned long long>(n),
         static_cast<unsigned long long>(w.bytes_written()), Seconds(t0));
  return 0;
}

int Read(const std::string& path, const char* id_hex) {
  auto t0 = std::chrono::steady_clock::now();
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return 1;
  FileSource source(f);
  ManifestReader r(&source);
  if (id_hex) {
    Result<Hash128> id = Hash128::FromHex(id_hex);
    if (!id.ok()) return Exit(id.status());
    r.ExpectId(*id);
  }
  Status s = r.Open();
  File file;
  uint64_t parts = 0;
  bool done = false;
  while (s.ok() && !done) {
    s = r.Next(&file, &done);
    if (!done) parts += file.part_xxh3_64_size();
  }
  fclose(f);
  if (!s.ok()) return Exit(s);
  printf(
      "{\"id\":\"%s\",\"files\":%llu,\"total_bytes\":%llu,\"parts\":%llu,"
      "\"read_s\":%.3f}\n",
      r.id().ToHex().c_str(),
      static_cast<unsigned long long>(r.footer().file_count()),
      static_cast<unsigned long long>(r.footer().total_bytes()),
      static_cast<unsigned long long>(parts), Seconds(t0));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "hash-dir" && argc == 5) {
    return HashDir(argv[2], argv[3], std::stoull(argv[4]));
  }
  if (cmd == "synth" && argc == 4) return Synth(std::stoull(argv[2]), argv[3]);
  if (cmd == "read" && (argc == 3 || argc == 4)) {
    return Read(argv[2], argc == 4 ? argv[3] : nullptr);
  }
  fprintf(stderr,
          "usage: manifest_tool hash-dir DIR OUT PART_SIZE | synth N OUT | "
          "read FILE [ID]\n");
  return 2;
}
