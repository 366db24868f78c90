// The floor for PNG convert time: per image, only the zlib inflate of its IDAT
// data with libdeflate (what any PNG decoder must do), files already in
// memory, one thread. bench_convert.sh prints it beside ferry's CPU time.
//   png_inflate_floor FILE...   -> "inflate_ms_per_image X images N"
// Best of 5 passes over all files, in thread CPU time (the machine is shared:
// wall time would count other processes' turns).
#include <libdeflate.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

double CpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

uint32_t Be32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 |
         p[3];
}

// The concatenated IDAT bodies and the inflated size (from IHDR; no
// interlace handling needed: the size only bounds the output buffer).
bool Idat(const std::string& f, std::string* idat, size_t* raw) {
  const auto* p = reinterpret_cast<const unsigned char*>(f.data());
  if (f.size() < 8 + 25 || std::memcmp(p + 12, "IHDR", 4) != 0) return false;
  const uint64_t w = Be32(p + 16), h = Be32(p + 20);
  const int depth = p[24], ctype = p[25];
  const int samples = ctype == 0   ? 1
                      : ctype == 2 ? 3
                      : ctype == 3 ? 1
                      : ctype == 4 ? 2
                                   : 4;
  // Adam7 adds at most a filter byte per row and pass: 2x the rows is ample.
  *raw = 2 * h * (1 + (w * samples * depth + 7) / 8) + 64;
  for (size_t pos = 8; pos + 12 <= f.size();) {
    const uint32_t len = Be32(p + pos);
    if (pos + 12 + len > f.size()) return false;
    if (std::memcmp(p + pos + 4, "IDAT", 4) == 0) idat->append(f, pos + 8, len);
    pos += 12 + size_t{len};
  }
  return !idat->empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> idats;
  std::vector<size_t> raws;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::string f((std::istreambuf_iterator<char>(in)), {});
    std::string idat;
    size_t raw = 0;
    if (!Idat(f, &idat, &raw)) {
      std::fprintf(stderr, "not a PNG: %s\n", argv[i]);
      return 1;
    }
    idats.push_back(std::move(idat));
    raws.push_back(raw);
  }
  if (idats.empty()) return 2;
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::vector<unsigned char> out(*std::max_element(raws.begin(), raws.end()));
  double best = 1e30;
  for (int pass = 0; pass < 5; ++pass) {
    const double t0 = CpuMs();
    for (size_t i = 0; i < idats.size(); ++i) {
      size_t got = 0;
      if (libdeflate_zlib_decompress(d, idats[i].data(), idats[i].size(),
                                     out.data(), raws[i],
                                     &got) != LIBDEFLATE_SUCCESS) {
        std::fprintf(stderr, "inflate failed: %s\n", argv[i + 1]);
        return 1;
      }
    }
    best = std::min(best, CpuMs() - t0);
  }
  libdeflate_free_decompressor(d);
  std::printf("inflate_ms_per_image %.3f images %zu\n", best / idats.size(),
              idats.size());
  return 0;
}
