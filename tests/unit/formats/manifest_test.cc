#include "formats/manifest/manifest.h"

#include <gtest/gtest.h>
#include <xxhash.h>
#include <zstd.h>

#include <string>
#include <vector>

namespace ferry::manifest {
namespace {

constexpr uint64_t kPart = 4;  // small parts: part counts are easy to break

File MakeFile(std::string path, uint64_t size, uint64_t part_size = kPart) {
  FileHasher h(part_size);
  std::string data(size, '\0');
  for (uint64_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 7 + 1);
  h.Update(data);
  File f;
  h.Finish(&f);
  f.set_path(std::move(path));
  f.set_mode(0644);
  return f;
}

Header MakeHeader(uint64_t part_size = kPart) {
  Header h;
  h.set_format_version(1);
  h.set_created_unix_s(1700000000);
  h.set_ferry_version("0.1.0");
  h.set_message("test");
  h.set_part_size(part_size);
  return h;
}

std::vector<File> SmallFiles() {
  return {MakeFile("a.txt", 0), MakeFile("dir/b.bin", 9),
          MakeFile("dir/c.bin", 4)};
}

Result<Hash128> Write(const Header& header, const std::vector<File>& files,
                      std::string* bytes) {
  StringSink sink;
  ManifestWriter w(&sink);
  FERRY_RETURN_IF_ERROR(w.Begin(header));
  for (const File& f : files) FERRY_RETURN_IF_ERROR(w.Add(f));
  FERRY_ASSIGN_OR_RETURN(Hash128 id, w.Finish());
  *bytes = sink.bytes();
  return id;
}

std::string SmallManifest() {
  std::string bytes;
  EXPECT_TRUE(Write(MakeHeader(), SmallFiles(), &bytes).ok());
  return bytes;
}

// Reads a whole manifest; the files go to *files.
Status ReadAll(std::string_view bytes, std::vector<File>* files = nullptr,
               Hash128* id = nullptr, const Hash128* expect = nullptr) {
  StringSource source(bytes);
  ManifestReader r(&source);
  if (expect) r.ExpectId(*expect);
  FERRY_RETURN_IF_ERROR(r.Open());
  for (;;) {
    File f;
    bool done = false;
    FERRY_RETURN_IF_ERROR(r.Next(&f, &done));
    if (done) break;
    if (files) files->push_back(std::move(f));
  }
  if (id) *id = r.id();
  return Status::OK();
}

// A manifest built by hand, bypassing the writer's checks: magic + one zstd
// frame of the records given (each already serialised, without length),
// with an end marker and a footer computed to match unless told otherwise.
struct RawOptions {
  bool end_marker = true;
  bool footer = true;
  int64_t count_delta = 0;
  std::string after_footer;  // inside the frame
  std::string after_frame;
  bool checksum = true;
};

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

std::string Raw(const Header& header, const std::vector<File>& files,
                const RawOptions& o = {}) {
  std::string plain;
  auto add = [&](const std::string& rec) {
    AppendVarint(rec.size(), &plain);
    plain += rec;
  };
  add(header.SerializeAsString());
  uint64_t total = 0;
  for (const File& f : files) {
    add(f.SerializeAsString());
    total += f.size();
  }
  if (o.end_marker) plain.push_back('\0');
  if (o.footer) {
    Footer footer;
    footer.set_file_count(files.size() + o.count_delta);
    footer.set_total_bytes(total);
    footer.set_records_xxh3_64(XXH3_64bits(plain.data(), plain.size()));
    add(footer.SerializeAsString());
  }
  plain += o.after_footer;
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, o.checksum ? 1 : 0);
  std::string z(ZSTD_compressBound(plain.size()), '\0');
  size_t n = ZSTD_compress2(c, z.data(), z.size(), plain.data(), plain.size());
  ZSTD_freeCCtx(c);
  EXPECT_FALSE(ZSTD_isError(n));
  z.resize(n);
  return std::string(kMagic) + z + o.after_frame;
}

void ExpectCorrupt(std::string_view bytes, std::string_view needle = {}) {
  Status s = ReadAll(bytes);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  if (!needle.empty()) {
    EXPECT_NE(s.message().find(needle), std::string_view::npos) << s.ToString();
  }
}

TEST(ManifestTest, RoundTripsZeroOneAndTenThousandFiles) {
  for (int n : {0, 1, 10000}) {
    std::vector<File> files;
    for (int i = 0; i < n; ++i) {
      char name[32];
      snprintf(name, sizeof name, "shard-%06d.tar", i);
      files.push_back(MakeFile(name, i % 13));
    }
    std::string bytes;
    auto id = Write(MakeHeader(), files, &bytes);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(*id, HashBytes(bytes));
    EXPECT_TRUE(VerifyId(bytes, *id).ok());

    StringSource source(bytes);
    ManifestReader r(&source);
    ASSERT_TRUE(r.Open().ok());
    EXPECT_EQ(r.header().format_version(), 1u);
    EXPECT_EQ(r.header().message(), "test");
    std::vector<File> got;
    for (;;) {
      File f;
      bool done = false;
      Status s = r.Next(&f, &done);
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (done) break;
      got.push_back(std::move(f));
    }
    ASSERT_EQ(got.size(), files.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].SerializeAsString(), files[i].SerializeAsString());
    }
    EXPECT_EQ(r.footer().file_count(), static_cast<uint64_t>(n));
    EXPECT_EQ(r.id(), *id);
  }
}

// Skip steps over the files' records one at a time (sync counts them to
// size its table): as many steps as Next reads files, then done; a
// truncated manifest is an error there too.
TEST(ManifestTest, SkipCountsTheFilesNextReads) {
  for (int n : {0, 1, 1000}) {
    std::vector<File> files;
    for (int i = 0; i < n; ++i) {
      char name[32];
      snprintf(name, sizeof name, "f%06d", i);
      files.push_back(MakeFile(name, i % 7));
    }
    std::string bytes;
    ASSERT_TRUE(Write(MakeHeader(), files, &bytes).ok());
    StringSource source(bytes);
    ManifestReader r(&source);
    ASSERT_TRUE(r.Open().ok());
    int steps = 0;
    for (bool done = false;;) {
      Status s = r.Skip(&done);
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (done) break;
      ++steps;
    }
    EXPECT_EQ(steps, n);
    if (n == 0) continue;
    StringSource cut(std::string_view(bytes).substr(0, bytes.size() / 2));
    ManifestReader t(&cut);
    Status s = t.Open();
    for (bool done = false; s.ok() && !done;) s = t.Skip(&done);
    EXPECT_FALSE(s.ok()) << "a truncated manifest counted to its end";
  }
}

TEST(ManifestTest, SameInputGivesSameBytesAndPinnedId) {
  std::string a, b;
  auto id_a = Write(MakeHeader(), SmallFiles(), &a);
  auto id_b = Write(MakeHeader(), SmallFiles(), &b);
  ASSERT_TRUE(id_a.ok() && id_b.ok());
  EXPECT_EQ(a, b);
  // A zstd or protobuf change that alters the bytes shows up here.
  EXPECT_EQ(id_a->ToHex(), "337a76a85da43b1484b3adca4bbd55d6");
  EXPECT_EQ(a.size(), 185u);
}

TEST(ManifestTest, ReaderRefusesEveryTruncation) {
  const std::string bytes = SmallManifest();
  ASSERT_TRUE(ReadAll(bytes).ok());
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    ExpectCorrupt(std::string_view(bytes).substr(0, n));
  }
}

TEST(ManifestTest, ReaderRefusesEverySingleBitFlip) {
  const std::string bytes = SmallManifest();
  std::vector<File> want;
  Hash128 id;
  ASSERT_TRUE(ReadAll(bytes, &want, &id).ok());
  int benign = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      SCOPED_TRACE(testing::Message() << "byte " << i << " bit " << bit);
      std::string bad = bytes;
      bad[i] ^= static_cast<char>(1 << bit);
      // Read as sync reads it, knowing the id: always refused.
      Status s = ReadAll(bad, nullptr, nullptr, &id);
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      // Without the id, a flip is refused unless it hits a bit zstd ignores
      // (an unused header bit, the window size): then the files are the
      // same ones, byte for byte.
      std::vector<File> got;
      if (ReadAll(bad, &got).ok()) {
        ++benign;
        ASSERT_EQ(got.size(), want.size());
        for (size_t k = 0; k < got.size(); ++k) {
          EXPECT_EQ(got[k].SerializeAsString(), want[k].SerializeAsString());
        }
      }
    }
  }
  EXPECT_LT(benign, 10);
}

TEST(ManifestTest, ReaderRefusesTrailingBytes) {
  std::string bytes = SmallManifest();
  ExpectCorrupt(bytes + "x", "after the zstd frame");
  // A second (valid) frame is trailing bytes too.
  ExpectCorrupt(bytes + bytes.substr(kMagic.size()), "after the zstd frame");
  ExpectCorrupt(Raw(MakeHeader(), SmallFiles(), {.after_frame = "\x01"}),
                "after the zstd frame");
  ExpectCorrupt(Raw(MakeHeader(), SmallFiles(), {.after_footer = "\x01"}),
                "after the footer");
}

TEST(ManifestTest, HandBuiltManifestIsAcceptedWhenRight) {
  // The test's own encoder agrees with the reader: the rejections below are
  // about the one thing each breaks.
  std::vector<File> files;
  EXPECT_TRUE(ReadAll(Raw(MakeHeader(), SmallFiles()), &files).ok());
  EXPECT_EQ(files.size(), 3u);
}

TEST(ManifestTest, ReaderRefusesBadPaths) {
  struct Case {
    std::string path, needle;
  } cases[] = {
      {"", "empty path"},
      {"/etc/passwd", "absolute path"},
      {"a/../../x", "'..' part"},
      {"..", "'..' part"},
      {"./a", "'.' part"},
      {"a//b", "empty part"},
      {"a/", "empty part"},
      {std::string("a\0b", 3), "NUL"},
      {std::string(4097, 'a'), "longer than 4096"},
      {std::string(256, 'a'), "longer than 255"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path.substr(0, 20));
    File f = MakeFile("x", 3);
    f.set_path(c.path);
    ExpectCorrupt(Raw(MakeHeader(), {f}), c.needle);
    ExpectCorrupt(Raw(MakeHeader(), {f}), "manifest record 1");
    // The writer refuses them too.
    std::string bytes;
    EXPECT_TRUE(Write(MakeHeader(), {f}, &bytes).status().IsInvalidArgument());
  }
}

TEST(ManifestTest, ReaderRefusesDuplicateAndUnsortedPaths) {
  ExpectCorrupt(Raw(MakeHeader(), {MakeFile("a", 1), MakeFile("a", 1)}),
                "manifest record 2 ('a'): path not after");
  ExpectCorrupt(Raw(MakeHeader(), {MakeFile("b", 1), MakeFile("a", 1)}),
                "not after");
  // Bytewise order: 0xff sorts after 'z' (unsigned), so this one is fine.
  EXPECT_TRUE(
      ReadAll(Raw(MakeHeader(), {MakeFile("z", 1), MakeFile("\xff", 1)})).ok());
}

TEST(ManifestTest, WriterRefusesDuplicateAndUnsortedPathsStickily) {
  StringSink sink;
  ManifestWriter w(&sink);
  ASSERT_TRUE(w.Begin(MakeHeader()).ok());
  ASSERT_TRUE(w.Add(MakeFile("b", 1)).ok());
  Status s = w.Add(MakeFile("b", 1));
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("strictly increasing"), std::string_view::npos);
  // Sticky: a valid file or Finish after the error still fails.
  EXPECT_TRUE(w.Add(MakeFile("c", 1)).IsInvalidArgument());
  EXPECT_TRUE(w.Finish().status().IsInvalidArgument());

  ManifestWriter w2(&sink);
  ASSERT_TRUE(w2.Begin(MakeHeader()).ok());
  ASSERT_TRUE(w2.Add(MakeFile("b", 1)).ok());
  EXPECT_TRUE(w2.Add(MakeFile("a", 1)).IsInvalidArgument());
}

TEST(ManifestTest, ReaderRefusesBadFileFields) {
  File huge = MakeFile("big", 3);
  huge.set_size((uint64_t{1} << 50) + 1);
  ExpectCorrupt(Raw(MakeHeader(), {huge}), "exceeds 2^50");
  File parts = MakeFile("p", 9);  // 3 parts of 4
  parts.add_part_xxh3_64(1);
  ExpectCorrupt(Raw(MakeHeader(), {parts}), "4 part hashes for 9 bytes");
  parts.mutable_part_xxh3_64()->RemoveLast();
  parts.mutable_part_xxh3_64()->RemoveLast();
  ExpectCorrupt(Raw(MakeHeader(), {parts}), "2 part hashes");
  File empty = MakeFile("e", 0);
  empty.add_part_xxh3_64(0);  // an empty file has no parts
  ExpectCorrupt(Raw(MakeHeader(), {empty}), "part hashes");
  File hash = MakeFile("h", 1);
  hash.set_xxh3_128("short");
  ExpectCorrupt(Raw(MakeHeader(), {hash}), "not 16");
  File mode = MakeFile("m", 1);
  mode.set_mode(04755);
  ExpectCorrupt(Raw(MakeHeader(), {mode}), "permission bits");
}

TEST(ManifestTest, ReaderRefusesBadHeaders) {
  Header h = MakeHeader();
  h.set_format_version(3);
  ExpectCorrupt(Raw(h, {}), "format version 3 (this ferry reads 1 and 2)");
  h = MakeHeader();
  h.set_format_version(1);
  h.set_part_size(0);
  ExpectCorrupt(Raw(h, {}), "part_size is 0");
  h = MakeHeader();
  h.set_format_version(1);
  h.set_parent_id("123");
  ExpectCorrupt(Raw(h, {}), "parent_id");
  ExpectCorrupt("FERRYMF2" + SmallManifest().substr(8), "magic");
  ExpectCorrupt("", "magic");
}

Header V1() { return MakeHeader(); }

// Format version 2 (README "Packs"): a file's bytes at an offset of a pack.
TEST(ManifestTest, PackFieldsFollowTheirRules) {
  File f = MakeFile("a", 5);
  f.set_pack(std::string(16, '\x07'));
  f.set_pack_offset(10);
  f.set_pack_size(15);
  Header v2 = MakeHeader();
  v2.set_format_version(2);
  std::vector<File> files;
  EXPECT_TRUE(ReadAll(Raw(v2, {f}), &files).ok());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].pack_offset(), 10u);
  // Only in version 2; a version 1 reader would fetch an object not there.
  ExpectCorrupt(Raw(MakeHeader(), {f}), "a pack in a format version 1");
  auto refused = [&](File g, const char* why) {
    ExpectCorrupt(Raw(v2, {g}), why);
    Status s = CheckFile(g, 4, 2);
    EXPECT_TRUE(s.IsCorruption()) << why;
  };
  File g = f;
  g.set_pack_offset(11);  // 11 + 5 > 15
  refused(g, "outside the pack");
  g = f;
  g.set_pack_offset(~uint64_t{0} - 2);  // offset + size overflows
  refused(g, "outside the pack");
  g = f;
  g.set_pack("short");
  refused(g, "not 16");
  g = f;
  g.set_pack_size((uint64_t{1} << 50) + 1);
  refused(g, "exceeds 2^50");
  g = MakeFile("e", 0);
  g.set_pack(std::string(16, '\x07'));
  g.set_pack_size(15);
  refused(g, "an empty file in a pack");
  g = MakeFile("b", 5);
  g.set_pack_offset(3);  // no pack
  refused(g, "without a pack");
  // The writer refuses a pack in a version 1 header too.
  StringSink sink;
  ManifestWriter w(&sink);
  ASSERT_TRUE(w.Begin(MakeHeader()).ok());
  EXPECT_TRUE(w.Add(f).IsInvalidArgument());
}

TEST(ManifestTest, PackIdIsTheListOfWhatThePackHolds) {
  Hash128 a{1, 2}, b{3, 4};
  PackIdHasher one;
  one.Add(a, 5);
  one.Add(b, 6);
  PackIdHasher two;
  two.Add(a, 5);
  two.Add(b, 6);
  EXPECT_EQ(one.Digest(), two.Digest());
  PackIdHasher swapped;
  swapped.Add(b, 6);
  swapped.Add(a, 5);
  EXPECT_NE(one.Digest(), swapped.Digest());
  PackIdHasher sized;
  sized.Add(a, 5);
  sized.Add(b, 7);
  EXPECT_NE(one.Digest(), sized.Digest());
  // Pinned: "ferry-pack-1\n", then each hash's 16 bytes and size as 8 bytes
  // little-endian (README "Packs").
  std::string bytes = "ferry-pack-1\n" + HashToBytes(a) +
                      std::string("\x05\0\0\0\0\0\0\0", 8) + HashToBytes(b) +
                      std::string("\x06\0\0\0\0\0\0\0", 8);
  EXPECT_EQ(one.Digest(), HashBytes(bytes));
}

TEST(ManifestTest, ReaderRefusesMissingOrExtraFooter) {
  ExpectCorrupt(Raw(V1(), SmallFiles(), {.footer = false}), "cut short");
  ExpectCorrupt(Raw(V1(), SmallFiles(), {.end_marker = false, .footer = false}),
                "cut short");
  // A second footer after the first.
  std::string extra;
  AppendVarint(2, &extra);
  extra += "\x08\x03";
  ExpectCorrupt(Raw(V1(), SmallFiles(), {.after_footer = extra}),
                "after the footer");
  ExpectCorrupt(Raw(V1(), SmallFiles(), {.count_delta = 1}),
                "footer says 4 files, the manifest has 3");
  ExpectCorrupt(Raw(V1(), SmallFiles(), {.checksum = false}),
                "without a checksum");
}

TEST(ManifestTest, HugeRecordLengthIsRefusedBeforeAllocating) {
  // A record claiming 2^62 bytes: refused from its length alone.
  std::string plain;
  AppendVarint(uint64_t{1} << 62, &plain);
  std::string z(ZSTD_compressBound(plain.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), plain.data(), plain.size(), 1));
  ExpectCorrupt(std::string(kMagic) + z, "");
  // Through the checksum-flag check: the length check is what stops it.
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  z.assign(ZSTD_compressBound(plain.size()), '\0');
  z.resize(ZSTD_compress2(c, z.data(), z.size(), plain.data(), plain.size()));
  ZSTD_freeCCtx(c);
  ExpectCorrupt(std::string(kMagic) + z, "exceeds 64 MiB");
}

TEST(ManifestTest, VerifyIdNamesBothHashes) {
  const std::string bytes = SmallManifest();
  Hash128 id;
  ASSERT_TRUE(ReadAll(bytes, nullptr, &id).ok());
  EXPECT_TRUE(VerifyId(bytes, id).ok());
  Hasher128 streaming;
  streaming.Update(std::string_view(bytes).substr(0, 5));
  streaming.Update(std::string_view(bytes).substr(5));
  EXPECT_TRUE(VerifyId(streaming, id).ok());
  Hash128 other = id;
  other.low ^= 1;
  Status s = VerifyId(bytes, other);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find(other.ToHex()), std::string_view::npos);
}

TEST(ManifestTest, FileHasherMatchesOneShotHashesInAnyChunking) {
  std::string data(10 * 1000 + 3, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31);
  const uint64_t part = 1000;
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{1000}, data.size()}) {
    FileHasher h(part);
    for (size_t at = 0; at < data.size(); at += chunk) {
      h.Update(std::string_view(data).substr(at, chunk));
    }
    File f;
    h.Finish(&f);
    EXPECT_EQ(f.size(), data.size());
    EXPECT_EQ(f.xxh3_128(), HashToBytes(HashBytes(data)));
    ASSERT_EQ(f.part_xxh3_64_size(), 11);
    for (int i = 0; i < 11; ++i) {
      EXPECT_EQ(f.part_xxh3_64(i),
                PartHash(std::string_view(data).substr(i * part, part)));
    }
  }
  FileHasher empty(part);
  File f;
  empty.Finish(&f);
  EXPECT_EQ(f.part_xxh3_64_size(), 0);
  EXPECT_EQ(f.xxh3_128(), HashToBytes(HashBytes("")));
  FileHasher exact(part);
  exact.Update(std::string_view(data).substr(0, 2 * part));
  exact.Finish(&f);
  EXPECT_EQ(f.part_xxh3_64_size(), 2);
}

TEST(ManifestTest, HashBytesAreCanonicalBigEndian) {
  Hash128 h{0x0102030405060708u, 0x090a0b0c0d0e0f10u};
  EXPECT_EQ(HashToBytes(h),
            "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10");
  Hash128 back;
  ASSERT_TRUE(HashFromBytes(HashToBytes(h), &back));
  EXPECT_EQ(back, h);
  EXPECT_FALSE(HashFromBytes("short", &back));
}

}  // namespace
}  // namespace ferry::manifest

namespace ferry::manifest {
namespace {

// Issue 13's fields (formats/delta/README.md): the signature block length is
// librsync's for the size, deltas come from other objects, sorted, 1..size
// bytes each.
TEST(ManifestTest, DeltaFieldsFollowTheirRules) {
  File f = MakeFile("big", 100000, 100000);
  EXPECT_TRUE(CheckFile(f, 100000).ok());
  f.set_sig_block_len(256);  // librsync's for 100000 bytes
  Delta* d = f.add_deltas();
  d->set_from_xxh3_128(std::string(16, '\x01'));
  d->set_size(5000);
  Delta* e = f.add_deltas();
  e->set_from_xxh3_128(std::string(16, '\x02'));
  e->set_size(100000);
  EXPECT_TRUE(CheckFile(f, 100000).ok()) << CheckFile(f, 100000).ToString();
  auto refused = [](File g, const char* why) {
    Status s = CheckFile(g, 100000);
    EXPECT_TRUE(s.IsCorruption()) << why;
    EXPECT_NE(s.message().find(why), std::string_view::npos) << s.ToString();
  };
  File g = f;
  g.set_sig_block_len(1024);
  refused(g, "sig_block_len");
  // sig_strong_len: 0 (32, manifests written before it) or 8..32, only with
  // a signature.
  for (uint32_t ok : {0u, 8u, 12u, 32u}) {
    g = f;
    g.set_sig_strong_len(ok);
    EXPECT_TRUE(CheckFile(g, 100000).ok()) << ok;
  }
  for (uint32_t bad : {4u, 33u}) {
    g = f;
    g.set_sig_strong_len(bad);
    refused(g, "sig_strong_len");
  }
  g = f;
  g.set_sig_block_len(0);
  g.set_sig_strong_len(8);
  refused(g, "without a signature");
  g = f;
  g.mutable_deltas(1)->set_from_xxh3_128(std::string(16, '\x01'));
  refused(g, "sorted");
  g = f;
  g.mutable_deltas(0)->set_from_xxh3_128(f.xxh3_128());
  refused(g, "another");
  g = f;
  g.mutable_deltas(0)->set_from_xxh3_128("short");
  refused(g, "another");
  g = f;
  g.mutable_deltas(0)->set_size(0);
  refused(g, "size");
  g = f;
  g.mutable_deltas(1)->set_size(100001);
  refused(g, "size");
}

}  // namespace
}  // namespace ferry::manifest
