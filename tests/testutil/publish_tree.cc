#include "testutil/publish_tree.h"

#include <ctime>

#include "ferry/atomic_file.h"
#include "formats/manifest/manifest.h"

namespace ferry::test {
namespace {

std::string RefPath(const std::string& bucket, const std::string& ref) {
  return JoinPath(
      bucket, ref == "HEAD" ? ".ferry/refs/HEAD" : ".ferry/refs/tags/" + ref);
}

}  // namespace

Status PutManifest(Env* env, const std::string& bucket, const std::string& id,
                   const std::string& bytes, const std::string& ref) {
  FERRY_RETURN_IF_ERROR(env->CreateDirs(JoinPath(bucket, ".ferry/manifests")));
  FERRY_RETURN_IF_ERROR(WriteFileAtomically(
      env, JoinPath(bucket, ".ferry/manifests/" + id), bytes));
  FERRY_RETURN_IF_ERROR(env->CreateDirs(DirName(RefPath(bucket, ref))));
  return WriteFileAtomically(env, RefPath(bucket, ref), id + "\n");
}

Result<Hash128> PublishTree(Env* env, const std::string& src,
                            const std::string& bucket,
                            const PublishTreeOptions& options) {
  uint64_t part_size =
      options.part_size ? options.part_size : manifest::kDefaultPartSize;
  FERRY_ASSIGN_OR_RETURN(auto paths, ListFilesRecursive(env, src));
  manifest::StringSink sink;
  manifest::ManifestWriter writer(&sink);
  manifest::Header header;
  header.set_part_size(part_size);
  header.set_created_unix_s(std::time(nullptr));
  header.set_message("test publish");
  auto parent = ReadFileToString(env, RefPath(bucket, options.ref));
  if (parent.ok() && parent->size() >= 32) {
    auto h = Hash128::FromHex(parent->substr(0, 32));
    if (h.ok()) header.set_parent_id(manifest::HashToBytes(*h));
  }
  FERRY_RETURN_IF_ERROR(writer.Begin(header));
  for (const std::string& rel : paths) {
    const std::string path = JoinPath(src, rel);
    FERRY_ASSIGN_OR_RETURN(std::string data, ReadFileToString(env, path));
    manifest::FileHasher hasher(part_size);
    hasher.Update(data);
    manifest::File f;
    f.set_path(rel);
    f.set_mode(0644);
    hasher.Finish(&f);
    Hash128 h;
    manifest::HashFromBytes(f.xxh3_128(), &h);
    std::string hex = h.ToHex();
    const std::string obj =
        JoinPath(bucket, ".ferry/objects/" + hex.substr(0, 2) + "/" + hex);
    if (!env->FileExists(obj)) {
      FERRY_RETURN_IF_ERROR(env->CreateDirs(DirName(obj)));
      FERRY_RETURN_IF_ERROR(WriteFileAtomically(env, obj, data));
    }
    FERRY_RETURN_IF_ERROR(writer.Add(f));
  }
  FERRY_ASSIGN_OR_RETURN(Hash128 id, writer.Finish());
  FERRY_RETURN_IF_ERROR(
      PutManifest(env, bucket, id.ToHex(), sink.bytes(), options.ref));
  return id;
}

}  // namespace ferry::test
