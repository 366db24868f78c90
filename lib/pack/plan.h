// The plan of a distributed pack (ferry pack --plan, docs/scale.md): what
// every worker and the merge need to know about the inputs without reading
// them again - the items with their content hashes, the earlier split
// assignment, the files skipped or unreadable while scanning, and the
// fingerprint that ties inputs and options together. Stored as
// OUT/.ferry-pack-plan, one line per entry, strings hex-encoded.
// Thread-safety: pure.
#ifndef FERRY_PACK_PLAN_H_
#define FERRY_PACK_PLAN_H_

#include <string>
#include <vector>

#include "ferry/hash.h"
#include "ferry/pack.h"
#include "ferry/split.h"

namespace ferry::pack {

inline constexpr char kPlanFile[] = ".ferry-pack-plan";
// Worker I of N keeps its finished shards in ".ferry-pack-worker-I-of-N".
inline constexpr char kWorkerFilePrefix[] = ".ferry-pack-worker-";

struct Plan {
  std::string fingerprint;
  std::vector<SplitItem> items;
  std::vector<Hash128> hashes;  // one per item
  std::vector<int> earlier;     // one per item, or empty
  std::vector<PackFailure> skipped, failed;
};

std::string SerializePlan(const Plan& plan);
// Corruption naming the line when the text is not a whole plan.
Result<Plan> ParsePlan(const std::string& text);

// Hex of the bytes ("-" for none) and back (FromHex: false if malformed).
std::string ToHex(std::string_view s);
bool FromHex(const std::string& hex, std::string* out);

}  // namespace ferry::pack

#endif  // FERRY_PACK_PLAN_H_
