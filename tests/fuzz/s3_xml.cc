// Fuzz target: the S3 XML documents (untrusted answers of any S3 endpoint):
// ListObjectsV2 pages, error documents, multipart control. Each either
// parses or is refused; a parsed listing keeps its invariants.
#include "remote/s3_xml.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view xml(reinterpret_cast<const char*>(data), size);
  auto page = ferry::remote::ParseListObjectsV2(xml);
  if (page.ok() && page->truncated && page->next_token.empty()) std::abort();
  (void)ferry::remote::ParseS3Error(xml);
  (void)ferry::remote::ParseUploadId(xml);
  ferry::remote::S3Error error;
  (void)ferry::remote::ParseCompleteMultipart(xml, &error);
  (void)ferry::remote::ParseListMultipartUploads(xml);
  std::string out;
  (void)ferry::remote::UrlDecodeS3(xml, &out);
  (void)ferry::remote::ParseIso8601(xml);
  return 0;
}
