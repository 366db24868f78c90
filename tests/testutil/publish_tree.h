// A stand-in for `ferry publish` in the sync tests: writes a tree into a
// local bucket in the remote layout (formats/manifest/README.md "In the
// bucket") - objects, the manifest, then the ref.
#ifndef FERRY_TESTS_TESTUTIL_PUBLISH_TREE_H_
#define FERRY_TESTS_TESTUTIL_PUBLISH_TREE_H_

#include <cstdint>
#include <string>

#include "ferry/env.h"
#include "ferry/hash.h"
#include "ferry/result.h"

namespace ferry::test {

struct PublishTreeOptions {
  uint64_t part_size = 0;    // 0: the manifest's default
  std::string ref = "HEAD";  // or a tag name
};

// Publishes every file below src to the bucket folder; returns the id.
Result<Hash128> PublishTree(Env* env, const std::string& src,
                            const std::string& bucket,
                            const PublishTreeOptions& options = {});

// Stores manifest bytes (any, even broken) under an id and points the ref
// at that id: for tests of hostile manifests.
Status PutManifest(Env* env, const std::string& bucket, const std::string& id,
                   const std::string& bytes, const std::string& ref = "HEAD");

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_PUBLISH_TREE_H_
