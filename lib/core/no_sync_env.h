// An Env that makes nothing durable, for --no-fsync.

#ifndef FERRY_LIB_CORE_NO_SYNC_ENV_H_
#define FERRY_LIB_CORE_NO_SYNC_ENV_H_

#include <memory>

#include "ferry/env.h"

namespace ferry {

// target, except that nothing is made durable: WritableFile::Sync only
// flushes, SyncDir and SyncFileSystem do nothing. Renames still order what
// a killed process leaves; a power loss may lose or damage files.
std::unique_ptr<Env> NewNoSyncEnv(Env* target);

}  // namespace ferry

#endif  // FERRY_LIB_CORE_NO_SYNC_ENV_H_
