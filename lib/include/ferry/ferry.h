// Umbrella header: the whole public API of libferry.
#ifndef FERRY_FERRY_H_
#define FERRY_FERRY_H_

#include "ferry/atomic_file.h"
#include "ferry/convert.h"
#include "ferry/crc32c.h"
#include "ferry/env.h"
#include "ferry/fault_env.h"
#include "ferry/hash.h"
#include "ferry/hash_list.h"
#include "ferry/image.h"
#include "ferry/inspect.h"
#include "ferry/json.h"
#include "ferry/pack.h"
#include "ferry/progress.h"
#include "ferry/result.h"
#include "ferry/split.h"
#include "ferry/status.h"
#include "ferry/text.h"
#include "ferry/verify.h"
#include "ferry/version.h"

#endif  // FERRY_FERRY_H_
