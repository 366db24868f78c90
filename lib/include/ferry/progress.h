// Progress reporting for long jobs. The library calls a Progress; the CLI
// chooses a bar on stderr (only when stderr is a terminal) or nothing.
// Thread-safety: Advance may be called from several threads.
#ifndef FERRY_PROGRESS_H_
#define FERRY_PROGRESS_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "ferry/export.h"

namespace ferry {

class FERRY_EXPORT Progress {
 public:
  virtual ~Progress();
  // total_items / total_bytes may be 0 when unknown.
  virtual void Begin(std::string_view what, uint64_t total_items,
                     uint64_t total_bytes) = 0;
  virtual void Advance(uint64_t items, uint64_t bytes) = 0;
  virtual void End() = 0;
};

// A Progress that does nothing. Never deleted.
FERRY_EXPORT Progress* NullProgress();

// A bar on stderr, redrawn at most 10 times a second, when stderr is a
// terminal and quiet is false; otherwise a Progress that does nothing.
FERRY_EXPORT std::unique_ptr<Progress> NewTerminalProgress(bool quiet);

}  // namespace ferry

#endif  // FERRY_PROGRESS_H_
