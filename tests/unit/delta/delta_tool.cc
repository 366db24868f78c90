// A small driver of lib/delta for the rdiff interop test and the bench,
// with rdiff's argument order:
//   delta_tool signature BASIS SIG
//   delta_tool delta SIG NEW DELTA        (SIG made by anyone: checked)
//   delta_tool patch BASIS DELTA OUT [MAX_OUTPUT]
// Prints one JSON line (bytes in, out, seconds); exit 0 ok, 3 Corruption
// (a refused signature or delta), 1 anything else, 2 usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ferry/delta.h"

using namespace ferry;

namespace {

int Exit(const Status& s) {
  if (s.ok()) return 0;
  fprintf(stderr, "delta_tool: %s\n", s.ToString().c_str());
  return s.IsCorruption() ? 3 : 1;
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
  bool usage =
      !((op == "signature" && argc == 4) || (op == "delta" && argc == 5) ||
        (op == "patch" && (argc == 5 || argc == 6)));
  if (usage) {
    fprintf(stderr,
            "usage: delta_tool signature BASIS SIG | delta SIG NEW DELTA | "
            "patch BASIS DELTA OUT [MAX_OUTPUT]\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  uint64_t in = 0, out = 0;
  Status s = Run(argc, argv, &in, &out);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (s.ok())
    printf(
        "{\"op\":\"%s\",\"in_bytes\":%llu,\"out_bytes\":%llu,"
        "\"seconds\":%.3f}\n",
        op.c_str(), static_cast<unsigned long long>(in),
        static_cast<unsigned long long>(out), secs);
  return Exit(s);
}
