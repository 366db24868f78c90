// sync_test_publish SRC BUCKET [REF]: PublishTree for the shell tests of
// ferry sync (until they use `ferry publish`). Prints the manifest id.
#include <cstdio>

#include "testutil/publish_tree.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: sync_test_publish SRC BUCKET [REF]\n");
    return 2;
  }
  ferry::test::PublishTreeOptions o;
  if (argc == 4) o.ref = argv[3];
  auto id =
      ferry::test::PublishTree(ferry::Env::Default(), argv[1], argv[2], o);
  if (!id.ok()) {
    std::fprintf(stderr, "sync_test_publish: %s\n",
                 id.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", id->ToHex().c_str());
  return 0;
}
