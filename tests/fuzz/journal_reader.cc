// Fuzz target: the resume journal reader (a file a crash, a full disk or
// another program may have left in any state). Any input either fails to
// parse or describes a consistent state that encodes back to a journal the
// reader accepts with the same parts.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "remote/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ferry::remote;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto st = ParseJournal(in);
  if (!st.ok()) return 0;
  if (st->done.size() != st->header.parts()) std::abort();
  uint64_t bytes = 0;
  std::string head = EncodeJournalHeader(st->header);
  std::string again = head;
  for (uint64_t p = 0; p < st->done.size(); ++p) {
    if (!st->done[p]) continue;
    bytes += st->header.PartLength(p);
    again += EncodeJournalRecord(head, p, st->header.PartLength(p));
  }
  if (bytes != st->done_bytes || bytes > st->header.size) std::abort();
  auto back = ParseJournal(again);
  if (!back.ok() || !(back->header == st->header) || back->done != st->done)
    std::abort();
  return 0;
}
