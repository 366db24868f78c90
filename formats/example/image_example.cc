// The protobuf adapter: the only file that includes the generated classes.
#include "formats/example/image_example.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "formats/example/example.pb.h"

namespace ferry::example {
namespace {

void SetBytes(tensorflow::Features* f, const std::string& key,
              std::string_view v) {
  (*f->mutable_feature())[key].mutable_bytes_list()->add_value(std::string(v));
}

void SetInt(tensorflow::Features* f, const std::string& key, int64_t v) {
  (*f->mutable_feature())[key].mutable_int64_list()->add_value(v);
}

}  // namespace

std::string SerializeImageExample(const ImageRecord& r) {
  tensorflow::Example ex;
  tensorflow::Features* f = ex.mutable_features();
  SetBytes(f, "image/encoded", r.encoded);
  SetBytes(f, "image/format", r.format);
  SetInt(f, "image/height", r.height);
  SetInt(f, "image/width", r.width);
  SetInt(f, "image/channels", r.channels);
  if (r.label >= 0) {
    SetInt(f, "image/class/label", r.label);
    SetBytes(f, "image/class/text", r.label_text);
  }
  SetBytes(f, "image/filename", r.filename);
  SetBytes(f, "image/key/xxh3", r.key_xxh3);
  // Map order is unspecified unless asked: deterministic serialization
  // sorts the keys, so the same record always gives the same bytes.
  std::string out;
  google::protobuf::io::StringOutputStream sos(&out);
  google::protobuf::io::CodedOutputStream cos(&sos);
  cos.SetSerializationDeterministic(true);
  ex.SerializeToCodedStream(&cos);
  cos.Trim();
  return out;
}

Result<std::map<std::string, FeatureSummary>> SummarizeExample(
    std::string_view serialized) {
  tensorflow::Example ex;
  if (!ex.ParseFromArray(serialized.data(),
                         static_cast<int>(serialized.size()))) {
    return Status::Corruption("record does not parse as tf.train.Example");
  }
  std::map<std::string, FeatureSummary> out;
  for (const auto& [key, feat] : ex.features().feature()) {
    FeatureSummary s;
    switch (feat.kind_case()) {
      case tensorflow::Feature::kBytesList:
        s.kind = "bytes";
        s.values = feat.bytes_list().value_size();
        for (const auto& v : feat.bytes_list().value()) s.bytes += v.size();
        if (s.values) s.first = feat.bytes_list().value(0).substr(0, 64);
        break;
      case tensorflow::Feature::kFloatList:
        s.kind = "float";
        s.values = feat.float_list().value_size();
        if (s.values) s.first = std::to_string(feat.float_list().value(0));
        break;
      case tensorflow::Feature::kInt64List:
        s.kind = "int64";
        s.values = feat.int64_list().value_size();
        if (s.values) s.first = std::to_string(feat.int64_list().value(0));
        break;
      default:
        s.kind = "empty";
    }
    out[key] = std::move(s);
  }
  return out;
}

Result<ParsedImage> ParseImageExample(std::string_view serialized) {
  tensorflow::Example ex;
  if (!ex.ParseFromArray(serialized.data(),
                         static_cast<int>(serialized.size()))) {
    return Status::Corruption("record does not parse as tf.train.Example");
  }
  const auto& m = ex.features().feature();
  auto bytes = [&](const char* k) -> std::string {
    auto it = m.find(k);
    return it != m.end() && it->second.bytes_list().value_size()
               ? it->second.bytes_list().value(0)
               : "";
  };
  auto int64 = [&](const char* k, int64_t dflt) -> int64_t {
    auto it = m.find(k);
    return it != m.end() && it->second.int64_list().value_size()
               ? it->second.int64_list().value(0)
               : dflt;
  };
  ParsedImage p;
  p.encoded = bytes("image/encoded");
  p.height = int64("image/height", 0);
  p.width = int64("image/width", 0);
  p.channels = int64("image/channels", 0);
  p.label = int64("image/class/label", -1);
  p.filename = bytes("image/filename");
  p.key_xxh3 = bytes("image/key/xxh3");
  if (p.encoded.empty())
    return Status::Corruption("Example has no image/encoded");
  return p;
}

}  // namespace ferry::example
