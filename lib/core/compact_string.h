// Strings held by the million in sync's tables (a 1,000,000-file manifest
// is read, diffed and planned in <= 400 bytes an entry; issue 12), where a
// std::string's 32 bytes plus a heap block add up:
// - CompactString: one pointer, for a string most entries leave empty (an
//   unmanaged remote's ETag);
// - InlineString: up to 32 characters in place, no heap (a remote key is 32
//   hex digits); a longer one (a damaged state file's) goes to the heap.
// Both read as a std::string_view and compare by their characters.
//
// Thread-safety: as std::string.
#ifndef FERRY_LIB_CORE_COMPACT_STRING_H_
#define FERRY_LIB_CORE_COMPACT_STRING_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace ferry {

class CompactString {
 public:
  CompactString() = default;
  CompactString(std::string_view s) { assign(s); }  // NOLINT: as a string
  CompactString(const CompactString& o) { assign(o); }
  CompactString(CompactString&&) noexcept = default;
  CompactString& operator=(const CompactString& o) {
    if (this != &o) assign(o);
    return *this;
  }
  CompactString& operator=(CompactString&&) noexcept = default;
  CompactString& operator=(std::string_view s) {
    assign(s);
    return *this;
  }
  operator std::string_view() const {  // NOLINT: reads as a string
    return s_ ? std::string_view(*s_) : std::string_view();
  }
  std::string str() const { return std::string(std::string_view(*this)); }
  bool empty() const { return !s_ || s_->empty(); }
  void clear() { s_.reset(); }
  friend bool operator==(const CompactString& a, const CompactString& b) {
    return std::string_view(a) == std::string_view(b);
  }

 private:
  void assign(std::string_view s) {
    if (s.empty())
      s_.reset();
    else
      s_ = std::make_unique<std::string>(s);
  }
  std::unique_ptr<std::string> s_;
};

class InlineString {
 public:
  static constexpr size_t kInline = 32;
  InlineString() = default;
  InlineString(std::string_view s) { assign(s); }    // NOLINT: as a string
  InlineString(const std::string& s) { assign(s); }  // NOLINT
  InlineString(const char* s) { assign(s); }         // NOLINT
  InlineString(const InlineString& o) { assign(o); }
  InlineString& operator=(const InlineString& o) {
    if (this != &o) assign(o);
    return *this;
  }
  ~InlineString() { reset(); }
  operator std::string_view() const {  // NOLINT: reads as a string
    return len_ == kHeap ? std::string_view(*heap())
                         : std::string_view(buf_, len_);
  }
  std::string str() const { return std::string(std::string_view(*this)); }
  bool empty() const { return std::string_view(*this).empty(); }
  friend bool operator==(const InlineString& a, const InlineString& b) {
    return std::string_view(a) == std::string_view(b);
  }
  friend auto operator<=>(const InlineString& a, const InlineString& b) {
    return std::string_view(a) <=> std::string_view(b);
  }
  friend std::string operator+(const InlineString& a, std::string_view b) {
    std::string out(a);
    out += b;
    return out;
  }

 private:
  static constexpr uint8_t kHeap = 0xff;
  std::string* heap() const {
    std::string* p;
    std::memcpy(&p, buf_, sizeof p);
    return p;
  }
  void reset() {
    if (len_ == kHeap) delete heap();
    len_ = 0;
  }
  void assign(std::string_view s) {
    if (s.size() <= kInline) {
      char bytes[kInline];  // s may be this string's own bytes
      if (!s.empty()) std::memcpy(bytes, s.data(), s.size());
      reset();
      if (!s.empty()) std::memcpy(buf_, bytes, s.size());
      len_ = static_cast<uint8_t>(s.size());
    } else {
      std::string* copy = new std::string(s);
      reset();
      std::memcpy(buf_, &copy, sizeof copy);
      len_ = kHeap;
    }
  }
  char buf_[kInline];
  uint8_t len_ = 0;
};

}  // namespace ferry

#endif  // FERRY_LIB_CORE_COMPACT_STRING_H_
