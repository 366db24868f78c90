// The ferry manifest (formats/manifest/README.md): "FERRYMF1" + one zstd
// frame of varint-length-delimited protobuf records (Header, File..., an empty
// end-of-files record, Footer). Pure format code: bytes go to a Sink and come
// from a Source; neither side ever holds more than one record, so memory is
// flat whatever the file count.
//
// Thread-safety: a ManifestWriter, ManifestReader or FileHasher is used by
// one thread at a time; the free functions are pure.
#ifndef FERRY_FORMATS_MANIFEST_MANIFEST_H_
#define FERRY_FORMATS_MANIFEST_MANIFEST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/hash.h"
#include "ferry/result.h"
#include "ferry/status.h"
#include "formats/manifest/manifest.pb.h"

namespace ferry::manifest {

inline constexpr std::string_view kMagic = "FERRYMF1";
inline constexpr uint32_t kFormatVersion = 1;
// A manifest with a file in a pack (README "Packs"); a reader takes 1 and 2.
inline constexpr uint32_t kPackFormatVersion = 2;
inline constexpr uint64_t kMaxRecordBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxFileSize = uint64_t{1} << 50;
inline constexpr uint64_t kDefaultPartSize = uint64_t{8} << 20;
inline constexpr size_t kMaxPathBytes = 4096;
inline constexpr size_t kMaxPathPartBytes = 255;
// Level 3: on manifests (mostly random hashes) level 19 saved 9 % of the
// bytes at 90x the time (100,000 entries: 0.26 s vs 23 s), too slow for a
// republish. The window is set explicitly so the bytes do not depend on the
// level's default; readers cap it.
inline constexpr int kZstdLevel = 3;
inline constexpr int kZstdWindowLog = 23;

// Where a writer puts the manifest's bytes.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual Status Append(std::string_view data) = 0;
};

// Where a reader gets them: up to n bytes into *got (may point at scratch);
// an empty *got means the end.
class Source {
 public:
  virtual ~Source() = default;
  virtual Status Read(size_t n, std::string_view* got, char* scratch) = 0;
};

// In-memory ends, for tests and for a manifest already fetched whole.
class StringSink : public Sink {
 public:
  Status Append(std::string_view data) override {
    bytes_.append(data);
    return Status::OK();
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class StringSource : public Source {
 public:
  explicit StringSource(std::string_view bytes) : bytes_(bytes) {}
  Status Read(size_t n, std::string_view* got, char* scratch) override;

 private:
  std::string_view bytes_;
};

// The canonical 16 bytes of a hash (big-endian, as `xxhsum -H2` prints), and
// back (*out is set only when bytes has exactly 16).
std::string HashToBytes(const Hash128& h);
bool HashFromBytes(std::string_view bytes, Hash128* out);
// XXH3-64 of one part, as File.part_xxh3_64 holds it.
uint64_t PartHash(std::string_view part);
// ceil(size / part_size); 0 for an empty file. part_size must be > 0.
uint64_t PartCount(uint64_t size, uint64_t part_size);

// The field rules of the README's table, one record at a time. The message
// says which rule failed; callers add the record number and path.
Status CheckHeader(const Header& header);
Status CheckPath(std::string_view path);
// With format_version (the header's): a file in a pack needs version 2.
Status CheckFile(const File& file, uint64_t part_size,
                 uint32_t format_version = kPackFormatVersion);

// A pack's id (README "Packs"): XXH3-128 of "ferry-pack-1\n" and, per file in
// pack order, its 16 hash bytes and its size (8 bytes, little-endian).
class PackIdHasher {
 public:
  PackIdHasher();
  void Add(const Hash128& hash, uint64_t size);
  Hash128 Digest() const { return h_.Digest(); }

 private:
  Hasher128 h_;
};

// Checks that the manifest's bytes hash to the id asked for (32 hex digits or
// the Hash128): bytes whole, or a hasher that has seen all of them.
Status VerifyId(std::string_view bytes, const Hash128& want);
Status VerifyId(const Hasher128& hasher, const Hash128& want);

// Streams a manifest into a sink: Begin, Add per file (paths strictly
// increasing), Finish. Errors are sticky: after one, every call returns it.
class ManifestWriter {
 public:
  explicit ManifestWriter(Sink* sink);
  ~ManifestWriter();
  ManifestWriter(const ManifestWriter&) = delete;
  ManifestWriter& operator=(const ManifestWriter&) = delete;

  // format_version is set to 1 when 0; InvalidArgument if the header breaks a
  // rule (part_size 0, parent_id not empty or 16 bytes).
  Status Begin(const Header& header);
  // InvalidArgument for a file that breaks a rule or is out of order.
  Status Add(const File& file);
  // Writes the footer and ends the frame; returns the id (XXH3-128 of every
  // byte written, magic included).
  Result<Hash128> Finish();

  uint64_t file_count() const { return file_count_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  Status Fail(Status s);
  Status AddRecord(std::string_view record);
  Status Compress(std::string_view data, bool end);
  Status Emit(std::string_view data);

  struct Zstd;
  Sink* sink_;
  std::unique_ptr<Zstd> zstd_;
  Status error_;
  enum class State { kNew, kOpen, kDone } state_ = State::kNew;
  Hasher128 id_hasher_;
  uint64_t part_size_ = 0;
  uint32_t format_version_ = 0;
  uint64_t file_count_ = 0;
  uint64_t total_bytes_ = 0;
  uint64_t bytes_written_ = 0;
  std::string last_path_;
  std::string record_;  // reused: one serialised record
  std::string out_;     // reused: compressed output buffer
};

// Reads a manifest from a source one record at a time, enforcing every rule;
// errors are Corruption naming the record number (the Header is record 0)
// and the path. Sticky like the writer.
class ManifestReader {
 public:
  explicit ManifestReader(Source* source);
  ~ManifestReader();
  ManifestReader(const ManifestReader&) = delete;
  ManifestReader& operator=(const ManifestReader&) = delete;

  // Makes the end check also require that the bytes hash to id (the id the
  // caller asked for): a flip the format cannot see (an unused zstd header
  // bit) is then Corruption too. Files returned before the end are not
  // trusted until Next reports done.
  void ExpectId(const Hash128& id) {
    expect_id_ = id;
    check_id_ = true;
  }

  // Reads the magic and the Header.
  Status Open();
  const Header& header() const { return header_; }

  // The next file in path order. At the end (after the Footer checked out,
  // nothing after it, the frame checksum good and the source at its end)
  // returns OK with *done = true.
  Status Next(File* file, bool* done);

  // Steps over the next file's record without parsing or checking it (a
  // first pass that counts the files, to size a table before another
  // reader reads them); *done at the end-of-files marker, the footer not
  // read. Not to be mixed with Next on one reader.
  Status Skip(bool* done);

  // After the end: the footer, and the XXH3-128 of every source byte, i.e.
  // the manifest's id (compare with VerifyId or ==).
  const Footer& footer() const { return footer_; }
  Hash128 id() const { return id_hasher_.Digest(); }
  uint64_t files_read() const { return file_count_; }

 private:
  Status Fail(Status s);
  Status Corrupt(std::string_view what, std::string_view path = {});
  Status ReadSource(std::string_view* got);
  Status Pull();
  Status Fill(size_t want);
  Status ReadVarint(uint64_t* v, size_t* bytes);
  Status ReadRecord(std::string_view* record, bool hash);
  Status ReadFooter();

  struct Zstd;
  Source* source_;
  std::unique_ptr<Zstd> zstd_;
  Status error_;
  enum class State { kNew, kFiles, kDone } state_ = State::kNew;
  Header header_;
  Footer footer_;
  Hasher128 id_hasher_;
  Hash128 expect_id_;
  bool check_id_ = false;
  uint64_t record_index_ = 0;
  uint64_t file_count_ = 0;
  uint64_t total_bytes_ = 0;
  bool total_overflow_ = false;
  std::string last_path_;
  std::string in_;  // compressed bytes not yet decompressed
  size_t in_pos_ = 0;
  std::string out_;  // decompressed bytes not yet parsed
  size_t out_pos_ = 0;
  bool frame_done_ = false;
  bool source_done_ = false;
  std::vector<char> scratch_;
};

// One pass over a file's bytes: its size, XXH3-128 and the XXH3-64 of every
// part_size part, as a File records them (path and mode left to the caller).
// A part_size of 0 means kDefaultPartSize.
class FileHasher {
 public:
  explicit FileHasher(uint64_t part_size);
  ~FileHasher();
  FileHasher(const FileHasher&) = delete;
  FileHasher& operator=(const FileHasher&) = delete;

  void Update(std::string_view data);
  // Sets size, xxh3_128 and part_xxh3_64 of *file (clearing old parts).
  void Finish(File* file);
  uint64_t size() const { return size_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  Hasher128 whole_;
  uint64_t part_size_;
  uint64_t size_ = 0;
  uint64_t in_part_ = 0;
  std::vector<uint64_t> parts_;
};

}  // namespace ferry::manifest

#endif  // FERRY_FORMATS_MANIFEST_MANIFEST_H_
