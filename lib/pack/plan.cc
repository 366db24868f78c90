#include "pack/plan.h"

#include <sstream>

namespace ferry::pack {

std::string ToHex(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out.empty() ? "-" : out;
}

bool FromHex(const std::string& hex, std::string* out) {
  out->clear();
  if (hex == "-") return true;
  if (hex.size() % 2 != 0) return false;
  auto digit = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
  };
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(char(hi * 16 + lo));
  }
  return true;
}

namespace {

void AddProblems(const char* word, const std::vector<PackFailure>& list,
                 std::string* s) {
  for (const PackFailure& f : list) {
    *s += std::string(word) + " " + ToHex(f.input) + " " +
          std::to_string(int(f.error.code())) + " " + ToHex(f.error.message()) +
          "\n";
  }
}

}  // namespace

std::string SerializePlan(const Plan& p) {
  std::string s = "ferry-pack-plan v1\nfingerprint " + p.fingerprint + "\n";
  for (size_t i = 0; i < p.items.size(); ++i) {
    const SplitItem& it = p.items[i];
    s += "item " + ToHex(it.path) + " " + ToHex(it.label) + " " +
         ToHex(it.group) + " " + p.hashes[i].ToHex() + " " +
         std::to_string(p.earlier.empty() ? -2 : p.earlier[i]) + "\n";
  }
  AddProblems("skipped", p.skipped, &s);
  AddProblems("failed", p.failed, &s);
  // The XXH3-128 of every line before it: an edited or lost line is damage,
  // not an option that differs.
  s += "check " + HashBytes(s).ToHex() + "\n";
  return s + "end\n";
}

Result<Plan> ParsePlan(const std::string& text) {
  Plan p;
  std::istringstream in(text);
  std::string line;
  size_t n = 0, offset = 0;
  bool ended = false, earlier = false, checked = false;
  auto bad = [&] {
    return Status::Corruption(std::string(kPlanFile),
                              "line " + std::to_string(n) + " is not a plan's");
  };
  for (size_t start = 0; std::getline(in, line); start = offset) {
    ++n;
    offset = start + line.size() + 1;
    std::istringstream f(line);
    std::string word;
    f >> word;
    if (ended || (checked && word != "end")) return bad();
    if (n == 1) {
      if (line != "ferry-pack-plan v1") return bad();
    } else if (word == "fingerprint") {
      f >> p.fingerprint;
    } else if (word == "item") {
      std::string path, label, group, hash;
      int e = 0;
      f >> path >> label >> group >> hash >> e;
      SplitItem it;
      auto h = Hash128::FromHex(hash);
      if (!f || !h.ok() || !FromHex(path, &it.path) ||
          !FromHex(label, &it.label) || !FromHex(group, &it.group) ||
          it.path.empty() || e < -2) {
        return bad();
      }
      if (p.items.empty()) earlier = e != -2;
      if (earlier != (e != -2)) return bad();
      p.items.push_back(std::move(it));
      p.hashes.push_back(*h);
      if (earlier) p.earlier.push_back(e);
    } else if (word == "skipped" || word == "failed") {
      std::string path, hex, msg;
      int code = 0;
      f >> path >> code >> hex;
      PackFailure pf;
      if (!f || code <= 0 || code > int(Status::Code::kFailedPrecondition) ||
          !FromHex(path, &pf.input) || !FromHex(hex, &msg)) {
        return bad();
      }
      pf.error = Status::FromCode(Status::Code(code), msg);
      (word == "skipped" ? p.skipped : p.failed).push_back(std::move(pf));
    } else if (word == "check") {
      std::string hex;
      f >> hex;
      if (hex != HashBytes(std::string_view(text).substr(0, start)).ToHex()) {
        return Status::Corruption(
            std::string(kPlanFile),
            "damaged (line " + std::to_string(n) +
                "'s check sum does not match the lines before it): rerun "
                "ferry pack --plan");
      }
      checked = true;
    } else if (word == "end") {
      ended = true;
    } else {
      return bad();
    }
  }
  if (!ended || !checked || p.fingerprint.empty()) {
    if (ended) {
      return Status::Corruption(std::string(kPlanFile),
                                "damaged (no check line): rerun ferry pack "
                                "--plan");
    }
    return Status::Corruption(std::string(kPlanFile),
                              "cut short (no end line)");
  }
  return p;
}

}  // namespace ferry::pack
