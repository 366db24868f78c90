// In-memory ByteSource and ByteSink (ferry/remote.h) for backend tests.
#ifndef FERRY_TESTS_TESTUTIL_BYTE_IO_H_
#define FERRY_TESTS_TESTUTIL_BYTE_IO_H_

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "ferry/remote.h"

namespace ferry::test {

class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  uint64_t size() const override { return data_.size(); }
  Status ReadAt(uint64_t offset, size_t n, char* scratch,
                size_t* got) override {
    *got =
        offset >= data_.size() ? 0 : std::min<size_t>(n, data_.size() - offset);
    std::copy_n(data_.data() + offset, *got, scratch);
    return Status::OK();
  }

 private:
  std::string data_;
};

class StringSink : public ByteSink {
 public:
  Status Append(std::string_view data) override {
    out.append(data);
    return Status::OK();
  }
  std::string out;
};

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_BYTE_IO_H_
