#include "remote/s3_xml.h"

#include <expat.h>

#include <charconv>
#include <ctime>
#include <functional>

namespace ferry::remote {
namespace {

// No S3 value comes near this; a page of ~1000 keys is well under 2 MiB.
constexpr size_t kMaxText = 64 << 10;

// A small SAX walk: on_end(path, text) for every element as it closes, with
// path the element names from the root ("ListBucketResult/Contents/Key")
// and text its character data; on_start(path) as it opens.
class XmlWalk {
 public:
  using Fn =
      std::function<void(const std::string& path, const std::string& text)>;
  XmlWalk(Fn on_start, Fn on_end)
      : on_start_(std::move(on_start)), on_end_(std::move(on_end)) {}

  Status Parse(std::string_view xml) {
    XML_Parser p = XML_ParserCreate("UTF-8");
    if (p == nullptr) return Status::IOError("XML parser: out of memory");
    XML_SetUserData(p, this);
    XML_SetElementHandler(p, Start, End);
    XML_SetCharacterDataHandler(p, Text);
    XML_SetDoctypeDeclHandler(p, Doctype, nullptr);
    parser_ = p;
    XML_Status st = XML_STATUS_OK;
    // XML_Parse takes an int length: feed large inputs in pieces.
    size_t pos = 0;
    do {
      size_t n = std::min<size_t>(xml.size() - pos, 1 << 30);
      bool last = pos + n == xml.size();
      st = XML_Parse(p, xml.data() + pos, static_cast<int>(n), last);
      pos += n;
    } while (st == XML_STATUS_OK && pos < xml.size());
    std::string err;
    if (st != XML_STATUS_OK) {
      err = error_.empty() ? XML_ErrorString(XML_GetErrorCode(p)) : error_;
      err += " at line " + std::to_string(XML_GetCurrentLineNumber(p));
    }
    XML_ParserFree(p);
    if (!err.empty())
      return Status::Corruption("S3 answer is not valid XML", err);
    return Status::OK();
  }

 private:
  static void Start(void* self, const XML_Char* name, const XML_Char**) {
    auto* w = static_cast<XmlWalk*>(self);
    w->depth_.push_back(w->path_.size());
    if (!w->path_.empty()) w->path_ += '/';
    w->path_ += name;
    w->text_.clear();
    if (w->on_start_) w->on_start_(w->path_, w->text_);
  }
  static void End(void* self, const XML_Char*) {
    auto* w = static_cast<XmlWalk*>(self);
    if (w->on_end_) w->on_end_(w->path_, w->text_);
    w->text_.clear();
    w->path_.resize(w->depth_.back());
    w->depth_.pop_back();
  }
  static void Text(void* self, const XML_Char* s, int len) {
    auto* w = static_cast<XmlWalk*>(self);
    if (w->text_.size() + static_cast<size_t>(len) > kMaxText) {
      w->Stop("an element's text is too long");
      return;
    }
    w->text_.append(s, static_cast<size_t>(len));
  }
  static void Doctype(void* self, const XML_Char*, const XML_Char*,
                      const XML_Char*, int) {
    static_cast<XmlWalk*>(self)->Stop("a DOCTYPE is not allowed");
  }
  void Stop(const char* why) {
    if (error_.empty()) error_ = why;
    XML_StopParser(parser_, XML_FALSE);
  }

  Fn on_start_, on_end_;
  XML_Parser parser_ = nullptr;
  std::string path_, text_, error_;
  std::vector<size_t> depth_;
};

bool ParseUint64(std::string_view s, uint64_t* v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

Status Malformed(std::string_view doc, std::string why) {
  return Status::Corruption("malformed S3 " + std::string(doc), why);
}

// The root element's name, "" when there is none.
std::string RootOf(const std::string& path) {
  return path.substr(0, path.find('/'));
}

}  // namespace

bool UrlDecodeS3(std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+') {
      *out += ' ';
    } else if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      *out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      *out += c;
    }
  }
  return true;
}

int64_t ParseIso8601(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fff...]Z
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' ||
      text[16] != ':')
    return -1;
  auto num = [&](size_t pos, size_t len, int* v) {
    auto [p, ec] =
        std::from_chars(text.data() + pos, text.data() + pos + len, *v);
    return ec == std::errc() && p == text.data() + pos + len;
  };
  std::tm tm{};
  int y, mo, d, h, mi, s;
  if (!num(0, 4, &y) || !num(5, 2, &mo) || !num(8, 2, &d) || !num(11, 2, &h) ||
      !num(14, 2, &mi) || !num(17, 2, &s))
    return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
    return -1;
  int64_t frac_ns = 0;
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    int64_t scale = 100000000;
    for (++pos; pos < text.size() && text[pos] >= '0' && text[pos] <= '9';
         ++pos) {
      frac_ns += (text[pos] - '0') * scale;
      scale /= 10;
    }
  }
  if (pos + 1 != text.size() || (text[pos] != 'Z' && text[pos] != 'z'))
    return -1;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  int64_t secs = static_cast<int64_t>(timegm(&tm));
  // Past 2262 (or before 1677) nanoseconds leave int64: no time told.
  constexpr int64_t kMaxSecs = INT64_MAX / 1000000000 - 1;
  if (secs > kMaxSecs || secs < -kMaxSecs) return -1;
  return secs * 1000000000 + frac_ns;
}

Result<ListPage> ParseListObjectsV2(std::string_view xml) {
  ListPage page;
  std::string root, encoding;
  ObjectInfo cur;
  bool have_size = false;
  std::string bad;
  XmlWalk walk(
      [&](const std::string& path, const std::string&) {
        if (root.empty()) root = RootOf(path);
        if (path == "ListBucketResult/Contents") {
          cur = ObjectInfo();
          have_size = false;
        }
      },
      [&](const std::string& path, const std::string& text) {
        if (path == "ListBucketResult/Contents/Key") {
          cur.key = text;
        } else if (path == "ListBucketResult/Contents/Size") {
          have_size = ParseUint64(text, &cur.size);
          if (!have_size && bad.empty()) bad = "bad Size '" + text + "'";
        } else if (path == "ListBucketResult/Contents/ETag") {
          cur.etag = text;
        } else if (path == "ListBucketResult/Contents/LastModified") {
          int64_t t = ParseIso8601(text);
          cur.mtime_ns = t > 0 ? t : 0;
        } else if (path == "ListBucketResult/Contents") {
          if (!have_size && bad.empty()) bad = "an object without a Size";
          page.objects.push_back(std::move(cur));
        } else if (path == "ListBucketResult/CommonPrefixes/Prefix") {
          page.prefixes.push_back(text);
        } else if (path == "ListBucketResult/IsTruncated") {
          if (text != "true" && text != "false" && bad.empty())
            bad = "bad IsTruncated '" + text + "'";
          page.truncated = text == "true";
        } else if (path == "ListBucketResult/NextContinuationToken") {
          page.next_token = text;
        } else if (path == "ListBucketResult/EncodingType") {
          encoding = text;
        }
      });
  FERRY_RETURN_IF_ERROR(walk.Parse(xml));
  if (root != "ListBucketResult")
    return Malformed("listing", "the root element is '" + root + "'");
  if (!bad.empty()) return Malformed("listing", bad);
  if (page.truncated && page.next_token.empty())
    return Malformed("listing", "truncated without a NextContinuationToken");
  if (encoding == "url") {
    std::string decoded;
    for (ObjectInfo& o : page.objects) {
      if (!UrlDecodeS3(o.key, &decoded))
        return Malformed("listing", "bad URL encoding of a key");
      o.key = decoded;
    }
    for (std::string& p : page.prefixes) {
      if (!UrlDecodeS3(p, &decoded))
        return Malformed("listing", "bad URL encoding of a prefix");
      p = decoded;
    }
  } else if (!encoding.empty()) {
    return Malformed("listing", "unknown EncodingType '" + encoding + "'");
  }
  return page;
}

Result<S3Error> ParseS3Error(std::string_view xml) {
  S3Error e;
  std::string root;
  XmlWalk walk(
      [&](const std::string& path, const std::string&) {
        if (root.empty()) root = RootOf(path);
      },
      [&](const std::string& path, const std::string& text) {
        if (path == "Error/Code") e.code = text;
        if (path == "Error/Message") e.message = text;
        if (path == "Error/RequestId") e.request_id = text;
        if (path == "Error/BucketName") e.bucket = text;
        if (path == "Error/Key") e.key = text;
      });
  FERRY_RETURN_IF_ERROR(walk.Parse(xml));
  if (root != "Error" || e.code.empty())
    return Malformed("error", "not an <Error> with a <Code>");
  return e;
}

Result<std::string> ParseUploadId(std::string_view xml) {
  std::string id, root;
  XmlWalk walk(
      [&](const std::string& path, const std::string&) {
        if (root.empty()) root = RootOf(path);
      },
      [&](const std::string& path, const std::string& text) {
        if (path == "InitiateMultipartUploadResult/UploadId") id = text;
      });
  FERRY_RETURN_IF_ERROR(walk.Parse(xml));
  if (id.empty()) return Malformed("multipart upload", "no UploadId");
  return id;
}

Result<std::string> ParseCompleteMultipart(std::string_view xml,
                                           S3Error* error) {
  std::string etag, root;
  XmlWalk walk(
      [&](const std::string& path, const std::string&) {
        if (root.empty()) root = RootOf(path);
      },
      [&](const std::string& path, const std::string& text) {
        if (path == "CompleteMultipartUploadResult/ETag") etag = text;
      });
  FERRY_RETURN_IF_ERROR(walk.Parse(xml));
  if (root == "Error") {
    FERRY_ASSIGN_OR_RETURN(*error, ParseS3Error(xml));
    return std::string();
  }
  if (root != "CompleteMultipartUploadResult")
    return Malformed("multipart completion", "root element '" + root + "'");
  return etag;
}

Result<UploadsPage> ParseListMultipartUploads(std::string_view xml) {
  UploadsPage page;
  std::string root;
  UploadsPage::Upload cur;
  XmlWalk walk(
      [&](const std::string& path, const std::string&) {
        if (root.empty()) root = RootOf(path);
        if (path == "ListMultipartUploadsResult/Upload") cur = {};
      },
      [&](const std::string& path, const std::string& text) {
        if (path == "ListMultipartUploadsResult/Upload/Key") cur.key = text;
        if (path == "ListMultipartUploadsResult/Upload/UploadId")
          cur.upload_id = text;
        if (path == "ListMultipartUploadsResult/Upload/Initiated")
          cur.initiated_ns = ParseIso8601(text);
        if (path == "ListMultipartUploadsResult/Upload")
          page.uploads.push_back(std::move(cur));
        if (path == "ListMultipartUploadsResult/IsTruncated")
          page.truncated = text == "true";
        if (path == "ListMultipartUploadsResult/EncodingType")
          page.url_encoded = text == "url";
        if (path == "ListMultipartUploadsResult/NextKeyMarker")
          page.next_key_marker = text;
        if (path == "ListMultipartUploadsResult/NextUploadIdMarker")
          page.next_upload_id_marker = text;
      });
  FERRY_RETURN_IF_ERROR(walk.Parse(xml));
  if (root != "ListMultipartUploadsResult")
    return Malformed("upload listing", "root element '" + root + "'");
  for (const auto& u : page.uploads) {
    if (u.upload_id.empty())
      return Malformed("upload listing", "an upload without an UploadId");
  }
  if (page.truncated && page.next_key_marker.empty() &&
      page.next_upload_id_marker.empty())
    return Malformed("upload listing", "truncated without a next marker");
  return page;
}

}  // namespace ferry::remote
