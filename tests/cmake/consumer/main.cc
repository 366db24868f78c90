// A program outside the ferry tree, built against the installed package.
#include <ferry/ferry.h>

#include <cstdio>

int main() {
  const std::string hex = ferry::HashBytes("hello").ToHex();
  std::printf("ferry %s: %s\n", FERRY_VERSION_STRING, hex.c_str());
  return hex == "b5e9c1ad071b3e7fc779cfaa5e523818" ? 0 : 1;
}
