// ferry: the command line over libferry. Each command lives in cmd_<name>.cc:
// parse, fill an Options struct, call one library function, print, exit.
#include <malloc.h>

#include <cstdio>

#include "cli.h"
#include "ferry/version.h"

// Image jobs allocate and free buffers of a few MB per image. glibc would
// serve each from fresh mmap'd pages (page faults, zeroing by the kernel)
// and trim the heap after every image; keeping them in the heap instead cut
// system time by a third in tests/bench/bench_convert.sh. Buffers above the
// threshold (huge images) are still mapped and returned to the system.
void TuneMalloc() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
}

int main(int argc, char** argv) {
  TuneMalloc();
  CLI::App app{
      "ferry: image datasets from raw files to the training node's disk.\n"
      "Exit codes: 0 ok, 1 some items failed, 2 usage, 3 integrity failure, "
      "4 IO/network failure."};
  app.set_version_flag("--version", FERRY_VERSION_STRING);
  app.require_subcommand(1);
  ferry::cli::Runner hash = ferry::cli::RegisterHash(&app);
  ferry::cli::Runner convert = ferry::cli::RegisterConvert(&app);
  ferry::cli::Runner split = ferry::cli::RegisterSplit(&app);
  ferry::cli::Runner pack = ferry::cli::RegisterPack(&app);
  ferry::cli::Runner inspect = ferry::cli::RegisterInspect(&app);
  ferry::cli::Runner verify = ferry::cli::RegisterVerify(&app);
  ferry::cli::Runner ls = ferry::cli::RegisterLs(&app);
  ferry::cli::Runner get = ferry::cli::RegisterGet(&app);
  ferry::cli::Runner put = ferry::cli::RegisterPut(&app);
  ferry::cli::Runner sync = ferry::cli::RegisterSync(&app);
  ferry::cli::Runner publish = ferry::cli::RegisterPublish(&app);
  ferry::cli::Runner log = ferry::cli::RegisterLog(&app);
  ferry::cli::Runner gc = ferry::cli::RegisterGc(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return ferry::cli::FinishStdout(rc == 0 ? 0 : ferry::cli::kExitUsage);
  }
  int rc = ferry::cli::kExitUsage;
  if (app.got_subcommand("hash")) rc = hash();
  if (app.got_subcommand("convert")) rc = convert();
  if (app.got_subcommand("split")) rc = split();
  if (app.got_subcommand("pack")) rc = pack();
  if (app.got_subcommand("inspect")) rc = inspect();
  if (app.got_subcommand("verify")) rc = verify();
  if (app.got_subcommand("ls")) rc = ls();
  if (app.got_subcommand("get")) rc = get();
  if (app.got_subcommand("put")) rc = put();
  if (app.got_subcommand("sync")) rc = sync();
  if (app.got_subcommand("publish")) rc = publish();
  if (app.got_subcommand("log")) rc = log();
  if (app.got_subcommand("gc")) rc = gc();
  return ferry::cli::FinishStdout(rc);
}
