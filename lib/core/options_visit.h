// One serialization of an options struct for both the resume fingerprint
// and the "options" a run records, so that no option can be left out of
// either: each options struct has one field visitor (VisitXxx(options, v)
// calls v(name, value) for every field), guarded by a static_assert on
// FieldCount that breaks the build when a field is added without it.
// Thread-safety: pure.
#ifndef FERRY_CORE_OPTIONS_VISIT_H_
#define FERRY_CORE_OPTIONS_VISIT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ferry/json.h"

namespace ferry::core {

namespace internal {
struct AnyField {
  template <class T>
  operator T() const;  // NOLINT: converts to any member type
};
}  // namespace internal

// The number of members of an aggregate (nested structs count once).
template <class T, class... A>
constexpr size_t FieldCount() {
  if constexpr (requires { T{A{}..., internal::AnyField{}}; }) {
    return FieldCount<T, A..., internal::AnyField>();
  } else {
    return sizeof...(A);
  }
}

// An enum value with its name, as visitors pass enums.
struct EnumField {
  int value;
  const char* name;
};

// Unambiguous "name=value" lines: the input of a fingerprint hash.
class OptionsText {
 public:
  void operator()(std::string_view name, bool v) { Line(name, v ? "1" : "0"); }
  void operator()(std::string_view name, EnumField v) {
    Line(name, std::to_string(v.value));
  }
  template <class T>
  requires std::is_integral_v<T>
  void operator()(std::string_view name, T v) { Line(name, std::to_string(v)); }
  void operator()(std::string_view name, double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    Line(name, buf);
  }
  void operator()(std::string_view name, const std::string& v) {
    // Length first: any byte may follow.
    Line(name, std::to_string(v.size()) + ":" + v);
  }
  template <class T>
  void operator()(std::string_view name, const std::vector<T>& v) {
    Line(name, "[" + std::to_string(v.size()) + "]");
    for (size_t i = 0; i < v.size(); ++i)
      (*this)(std::string(name) + "[" + std::to_string(i) + "]", v[i]);
  }
  const std::string& str() const { return text_; }

 private:
  void Line(std::string_view name, const std::string& value) {
    text_.append(name).append("=").append(value).append("\n");
  }
  std::string text_;
};

// The same fields as members of an open JSON object.
class OptionsJson {
 public:
  explicit OptionsJson(JsonWriter* j) : j_(j) {}
  void operator()(std::string_view name, bool v) { j_->Key(name).Bool(v); }
  void operator()(std::string_view name, EnumField v) {
    j_->Key(name).String(v.name);
  }
  template <class T>
  requires std::is_integral_v<T>
  void operator()(std::string_view name, T v) {
    if constexpr (std::is_signed_v<T>) {
      j_->Key(name).Int(v);
    } else {
      j_->Key(name).Uint(v);
    }
  }
  void operator()(std::string_view name, double v) { j_->Key(name).Double(v); }
  void operator()(std::string_view name, const std::string& v) {
    j_->Key(name).String(v);
  }
  void operator()(std::string_view name, const std::vector<std::string>& v) {
    j_->Key(name).BeginArray();
    for (const auto& s : v) j_->String(s);
    j_->EndArray();
  }
  void operator()(std::string_view name, const std::vector<double>& v) {
    j_->Key(name).BeginArray();
    for (double d : v) j_->Double(d);
    j_->EndArray();
  }

 private:
  JsonWriter* j_;
};

}  // namespace ferry::core

#endif  // FERRY_CORE_OPTIONS_VISIT_H_
