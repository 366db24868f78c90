// The manifest's zstd + protobuf adapter (formats/manifest/README.md).
#include "formats/manifest/manifest.h"

#include <xxhash.h>
#include <zstd.h>
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#endif

#include <algorithm>
#include <cstring>

#include "formats/delta/rdiff_format.h"

namespace ferry::manifest {
namespace {

// A path as an error message shows it: printable ASCII as is, other bytes as
// \xNN, cut after 256 bytes (a hostile path may be megabytes long).
std::string Printable(std::string_view path) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < path.size() && i < 256; ++i) {
    const unsigned char c = path[i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  out += path.size() > 256 ? "'..." : "'";
  return out;
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// The zstd frame magic (RFC 8878) and the Content_Checksum_flag of the
// Frame_Header_Descriptor byte that follows it.
constexpr unsigned char kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
constexpr unsigned char kChecksumFlag = 0x04;

}  // namespace

Status StringSource::Read(size_t n, std::string_view* got, char* /*scratch*/) {
  *got = bytes_.substr(0, n);
  bytes_.remove_prefix(got->size());
  return Status::OK();
}

std::string HashToBytes(const Hash128& h) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH128_hash_t{h.low, h.high});
  return std::string(reinterpret_cast<const char*>(c.digest), 16);
}

bool HashFromBytes(std::string_view bytes, Hash128* out) {
  if (bytes.size() != 16) return false;
  XXH128_canonical_t c;
  std::memcpy(c.digest, bytes.data(), 16);
  XXH128_hash_t h = XXH128_hashFromCanonical(&c);
  *out = Hash128{h.high64, h.low64};
  return true;
}

uint64_t PartHash(std::string_view part) {
  return XXH3_64bits(part.data(), part.size());
}

uint64_t PartCount(uint64_t size, uint64_t part_size) {
  return size / part_size + (size % part_size != 0);
}

Status CheckHeader(const Header& header) {
  if (header.format_version() != kFormatVersion &&
      header.format_version() != kPackFormatVersion) {
    return Status::Corruption("format version " +
                              std::to_string(header.format_version()) +
                              " (this ferry reads 1 and 2)");
  }
  if (header.part_size() == 0) return Status::Corruption("part_size is 0");
  if (!header.parent_id().empty() && header.parent_id().size() != 16) {
    return Status::Corruption("parent_id is " +
                              std::to_string(header.parent_id().size()) +
                              " bytes, not 16");
  }
  return Status::OK();
}

Status CheckPath(std::string_view path) {
  if (path.empty()) return Status::Corruption("empty path");
  if (path.size() > kMaxPathBytes) {
    return Status::Corruption("path longer than 4096 bytes");
  }
  if (path.find('\0') != std::string_view::npos) {
    return Status::Corruption("NUL byte in path");
  }
  if (path.front() == '/') return Status::Corruption("absolute path");
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    std::string_view part = path.substr(
        start, slash == std::string_view::npos ? slash : slash - start);
    if (part.empty()) return Status::Corruption("empty part in path");
    if (part == "." || part == "..") {
      return Status::Corruption("'" + std::string(part) + "' part in path");
    }
    if (part.size() > kMaxPathPartBytes) {
      return Status::Corruption("path part longer than 255 bytes");
    }
    if (slash == std::string_view::npos) return Status::OK();
    start = slash + 1;
  }
}

// Issue 13's fields (formats/delta/README.md): the signature's block length
// is librsync's for the size; deltas come from other objects, sorted by
// their source, each of 1 .. size bytes.
static Status CheckDeltaFields(const File& file) {
  if (file.sig_block_len() != 0 &&
      file.sig_block_len() != delta::format::RecommendedBlockLen(file.size()))
    return Status::Corruption(
        "sig_block_len " + std::to_string(file.sig_block_len()) +
        " is not the block length for " + std::to_string(file.size()) +
        " bytes (" +
        std::to_string(delta::format::RecommendedBlockLen(file.size())) + ")");
  if (file.sig_strong_len() != 0 &&
      (file.sig_block_len() == 0 ||
       file.sig_strong_len() < delta::format::kMinStrongLen ||
       file.sig_strong_len() > delta::format::kMaxStrongLen))
    return Status::Corruption(
        "sig_strong_len " + std::to_string(file.sig_strong_len()) +
        (file.sig_block_len() == 0
             ? " without a signature"
             : " outside " + std::to_string(delta::format::kMinStrongLen) +
                   ".." + std::to_string(delta::format::kMaxStrongLen)));
  for (int i = 0; i < file.deltas_size(); ++i) {
    const Delta& d = file.deltas(i);
    if (d.from_xxh3_128().size() != 16 || d.from_xxh3_128() == file.xxh3_128())
      return Status::Corruption("delta " + std::to_string(i) +
                                ": from_xxh3_128 is not another 16-byte hash");
    if (i > 0 && !(file.deltas(i - 1).from_xxh3_128() < d.from_xxh3_128()))
      return Status::Corruption(
          "deltas not sorted by from_xxh3_128, or repeated");
    if (d.size() == 0 || d.size() > file.size())
      return Status::Corruption("delta " + std::to_string(i) + ": size " +
                                std::to_string(d.size()) + " outside 1.." +
                                std::to_string(file.size()));
  }
  return Status::OK();
}

// Format version 2's fields: where in a pack the file's bytes are.
static Status CheckPackFields(const File& file, uint32_t format_version) {
  if (file.pack().empty()) {
    if (file.pack_offset() != 0 || file.pack_size() != 0)
      return Status::Corruption("pack_offset or pack_size without a pack");
    return Status::OK();
  }
  if (format_version < kPackFormatVersion)
    return Status::Corruption("a pack in a format version " +
                              std::to_string(format_version) + " manifest");
  if (file.pack().size() != 16)
    return Status::Corruption("pack is " + std::to_string(file.pack().size()) +
                              " bytes, not 16");
  if (file.size() == 0) return Status::Corruption("an empty file in a pack");
  if (file.pack_size() > kMaxFileSize)
    return Status::Corruption("pack_size " + std::to_string(file.pack_size()) +
                              " exceeds 2^50");
  if (file.pack_offset() > file.pack_size() ||
      file.size() > file.pack_size() - file.pack_offset())
    return Status::Corruption("bytes " + std::to_string(file.pack_offset()) +
                              " + " + std::to_string(file.size()) +
                              " outside the pack's " +
                              std::to_string(file.pack_size()));
  return Status::OK();
}

PackIdHasher::PackIdHasher() { h_.Update("ferry-pack-1\n"); }

void PackIdHasher::Add(const Hash128& hash, uint64_t size) {
  h_.Update(HashToBytes(hash));
  char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<char>(size >> (8 * i));
  h_.Update(std::string_view(le, 8));
}

Status CheckFile(const File& file, uint64_t part_size,
                 uint32_t format_version) {
  FERRY_RETURN_IF_ERROR(CheckPath(file.path()));
  if (file.xxh3_128().size() != 16) {
    return Status::Corruption("xxh3_128 is " +
                              std::to_string(file.xxh3_128().size()) +
                              " bytes, not 16");
  }
  if (file.size() > kMaxFileSize) {
    return Status::Corruption("declared size " + std::to_string(file.size()) +
                              " exceeds 2^50");
  }
  const uint64_t want = PartCount(file.size(), part_size);
  if (static_cast<uint64_t>(file.part_xxh3_64_size()) != want) {
    return Status::Corruption(
        std::to_string(file.part_xxh3_64_size()) + " part hashes for " +
        std::to_string(file.size()) + " bytes in parts of " +
        std::to_string(part_size) + " (want " + std::to_string(want) + ")");
  }
  if (file.mode() & ~uint32_t{0777}) {
    return Status::Corruption("mode has bits beyond the permission bits");
  }
  FERRY_RETURN_IF_ERROR(CheckPackFields(file, format_version));
  return CheckDeltaFields(file);
}

Status VerifyId(std::string_view bytes, const Hash128& want) {
  Hasher128 h;
  h.Update(bytes);
  return VerifyId(h, want);
}

Status VerifyId(const Hasher128& hasher, const Hash128& want) {
  const Hash128 got = hasher.Digest();
  if (got == want) return Status::OK();
  return Status::Corruption("manifest bytes hash to " + got.ToHex() +
                            ", not to the id " + want.ToHex());
}

// ---------------------------------------------------------------- writer

struct ManifestWriter::Zstd {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  XXH3_state_t* records = XXH3_createState();
  ~Zstd() {
    ZSTD_freeCCtx(cctx);
    XXH3_freeState(records);
  }
};

ManifestWriter::ManifestWriter(Sink* sink)
    : sink_(sink), zstd_(std::make_unique<Zstd>()) {}
ManifestWriter::~ManifestWriter() = default;

Status ManifestWriter::Fail(Status s) {
  if (error_.ok()) error_ = s;
  return s;
}

Status ManifestWriter::Emit(std::string_view data) {
  id_hasher_.Update(data);
  bytes_written_ += data.size();
  return sink_->Append(data);
}

Status ManifestWriter::Compress(std::string_view data, bool end) {
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  out_.resize(ZSTD_CStreamOutSize());
  for (;;) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    const size_t left = ZSTD_compressStream2(
        zstd_->cctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(left)) {
      return Fail(Status::IOError("zstd", ZSTD_getErrorName(left)));
    }
    if (out.pos > 0) {
      Status s = Emit(std::string_view(out_.data(), out.pos));
      if (!s.ok()) return Fail(s);
    }
    if (end ? left == 0 : in.pos == in.size) return Status::OK();
  }
}

Status ManifestWriter::AddRecord(std::string_view record) {
  std::string prefix;
  AppendVarint(record.size(), &prefix);
  XXH3_64bits_update(zstd_->records, prefix.data(), prefix.size());
  XXH3_64bits_update(zstd_->records, record.data(), record.size());
  FERRY_RETURN_IF_ERROR(Compress(prefix, false));
  return Compress(record, false);
}

Status ManifestWriter::Begin(const Header& in) {
  if (!error_.ok()) return error_;
  if (state_ != State::kNew) {
    return Fail(Status::InvalidArgument("manifest: Begin called twice"));
  }
  Header header = in;
  if (header.format_version() == 0) header.set_format_version(kFormatVersion);
  Status s = CheckHeader(header);
  if (!s.ok())
    return Fail(Status::InvalidArgument("manifest header", s.message()));
  record_.clear();
  Header back;
  if (!header.SerializeToString(&record_) || !back.ParseFromString(record_)) {
    return Fail(Status::InvalidArgument("manifest header: not serialisable"));
  }
  if (!zstd_->cctx || !zstd_->records) {
    return Fail(Status::ResourceExhausted("manifest: out of memory"));
  }
  for (auto [param, value] : {std::pair{ZSTD_c_compressionLevel, kZstdLevel},
                              {ZSTD_c_windowLog, kZstdWindowLog},
                              {ZSTD_c_checksumFlag, 1},
                              {ZSTD_c_nbWorkers, 0}}) {
    const size_t r = ZSTD_CCtx_setParameter(zstd_->cctx, param, value);
    if (ZSTD_isError(r)) {
      return Fail(Status::IOError("zstd", ZSTD_getErrorName(r)));
    }
  }
  XXH3_64bits_reset(zstd_->records);
  part_size_ = header.part_size();
  format_version_ = header.format_version();
  state_ = State::kOpen;
  s = Emit(kMagic);
  if (!s.ok()) return Fail(s);
  return AddRecord(record_);
}

Status ManifestWriter::Add(const File& file) {
  if (!error_.ok()) return error_;
  if (state_ != State::kOpen) {
    return Fail(Status::InvalidArgument("manifest: Add outside Begin/Finish"));
  }
  const std::string where = "manifest file " + Printable(file.path());
  Status s = CheckFile(file, part_size_, format_version_);
  if (!s.ok()) return Fail(Status::InvalidArgument(where, s.message()));
  if (file_count_ > 0 && !(last_path_ < file.path())) {
    return Fail(Status::InvalidArgument(
        where, "paths must be added in strictly increasing order (after " +
                   Printable(last_path_) + ")"));
  }
  if (total_bytes_ + file.size() < total_bytes_) {
    return Fail(Status::InvalidArgument(where, "total bytes overflow"));
  }
  record_.clear();
  file.SerializeToString(&record_);
  if (record_.size() > kMaxRecordBytes) {
    return Fail(Status::InvalidArgument(where, "record larger than 64 MiB"));
  }
  s = AddRecord(record_);
  if (!s.ok()) return s;
  last_path_ = file.path();
  total_bytes_ += file.size();
  ++file_count_;
  return Status::OK();
}

Result<Hash128> ManifestWriter::Finish() {
  if (!error_.ok()) return error_;
  if (state_ != State::kOpen) {
    return Fail(Status::InvalidArgument("manifest: Finish without Begin"));
  }
  // The end of the File records: an empty record (a File never is).
  const char end_marker = 0;
  XXH3_64bits_update(zstd_->records, &end_marker, 1);
  FERRY_RETURN_IF_ERROR(Compress(std::string_view(&end_marker, 1), false));
  Footer footer;
  footer.set_file_count(file_count_);
  footer.set_total_bytes(total_bytes_);
  footer.set_records_xxh3_64(XXH3_64bits_digest(zstd_->records));
  std::string record;
  AppendVarint(footer.ByteSizeLong(), &record);
  footer.AppendToString(&record);
  FERRY_RETURN_IF_ERROR(Compress(record, true));
  state_ = State::kDone;
  return id_hasher_.Digest();
}

// ---------------------------------------------------------------- reader

struct ManifestReader::Zstd {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  XXH3_state_t* records = XXH3_createState();
  ~Zstd() {
    ZSTD_freeDCtx(dctx);
    XXH3_freeState(records);
  }
};

ManifestReader::ManifestReader(Source* source)
    : source_(source), zstd_(std::make_unique<Zstd>()) {}
ManifestReader::~ManifestReader() = default;

Status ManifestReader::Fail(Status s) {
  if (error_.ok()) error_ = s;
  return s;
}

Status ManifestReader::Corrupt(std::string_view what, std::string_view path) {
  std::string where = "manifest record " + std::to_string(record_index_);
  if (!path.empty()) where += " (" + Printable(path) + ")";
  return Fail(Status::Corruption(where, what));
}

// Reads more compressed bytes; *got is empty at the source's end.
Status ManifestReader::ReadSource(std::string_view* got) {
  constexpr size_t kChunk = 128 * 1024;
  if (scratch_.size() < kChunk) scratch_.resize(kChunk);
  if (in_pos_ == in_.size()) {
    in_.clear();
    in_pos_ = 0;
  }
  Status s = source_->Read(kChunk, got, scratch_.data());
  if (!s.ok()) return Fail(s);
  id_hasher_.Update(*got);
  in_.append(*got);
  return Status::OK();
}

// Decompresses one step, appending to out_.
Status ManifestReader::Pull() {
  if (frame_done_) return Corrupt("record cut short by the end of the frame");
  if (in_pos_ == in_.size()) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(ReadSource(&got));
    if (got.empty()) return Corrupt("truncated: the zstd frame is cut short");
  }
  const size_t chunk = ZSTD_DStreamOutSize();
  const size_t old = out_.size();
  out_.resize(old + chunk);
  ZSTD_outBuffer out{out_.data() + old, chunk, 0};
  ZSTD_inBuffer in{in_.data() + in_pos_, in_.size() - in_pos_, 0};
  const size_t r = ZSTD_decompressStream(zstd_->dctx, &out, &in);
  in_pos_ += in.pos;
  out_.resize(old + out.pos);
  if (ZSTD_isError(r)) {
    return Corrupt(std::string("zstd: ") + ZSTD_getErrorName(r));
  }
  if (r == 0) frame_done_ = true;
  return Status::OK();
}

// Makes sure want decompressed bytes are buffered at out_pos_.
Status ManifestReader::Fill(size_t want) {
  if (out_pos_ > 0 && out_pos_ >= out_.size() - out_pos_) {
    out_.erase(0, out_pos_);
    out_pos_ = 0;
  }
  while (out_.size() - out_pos_ < want) FERRY_RETURN_IF_ERROR(Pull());
  return Status::OK();
}

Status ManifestReader::ReadVarint(uint64_t* v, size_t* bytes) {
  *v = 0;
  *bytes = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    FERRY_RETURN_IF_ERROR(Fill(1));
    const unsigned char b = out_[out_pos_++];
    ++*bytes;
    *v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return Status::OK();
  }
  return Corrupt("bad record length varint");
}

// The next record's bytes (valid until the next read). Its length is checked
// against the 64 MiB limit before anything is buffered for it.
Status ManifestReader::ReadRecord(std::string_view* record, bool hash) {
  uint64_t len = 0;
  size_t len_bytes = 0;
  FERRY_RETURN_IF_ERROR(ReadVarint(&len, &len_bytes));
  if (len > kMaxRecordBytes) {
    return Corrupt("record length " + std::to_string(len) + " exceeds 64 MiB");
  }
  // Fill may move the buffer: hash the varint re-encoded (it is minimal).
  std::string prefix;
  AppendVarint(len, &prefix);
  if (len_bytes != prefix.size()) {
    return Corrupt("record length varint not minimal");
  }
  FERRY_RETURN_IF_ERROR(Fill(len));
  *record = std::string_view(out_.data() + out_pos_, len);
  out_pos_ += len;
  if (hash) {
    XXH3_64bits_update(zstd_->records, prefix.data(), prefix.size());
    XXH3_64bits_update(zstd_->records, record->data(), record->size());
  }
  return Status::OK();
}

Status ManifestReader::Open() {
  if (!error_.ok()) return error_;
  if (state_ != State::kNew) return Status::OK();
  if (!zstd_->dctx || !zstd_->records) {
    return Fail(Status::ResourceExhausted("manifest: out of memory"));
  }
  XXH3_64bits_reset(zstd_->records);
  // Magic, then the zstd frame header (checksum flag required).
  const size_t need = kMagic.size() + 5;
  while (in_.size() < need) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(ReadSource(&got));
    if (got.empty()) break;
  }
  if (in_.size() < kMagic.size() ||
      std::string_view(in_).substr(0, kMagic.size()) != kMagic) {
    return Fail(Status::Corruption("not a ferry manifest (no FERRYMF1 magic)"));
  }
  in_pos_ = kMagic.size();
  if (in_.size() < need ||
      std::memcmp(in_.data() + in_pos_, kZstdMagic, 4) != 0) {
    return Corrupt("no zstd frame after the magic");
  }
  if (!(static_cast<unsigned char>(in_[in_pos_ + 4]) & kChecksumFlag)) {
    return Corrupt("zstd frame without a checksum");
  }
  const size_t r =
      ZSTD_DCtx_setParameter(zstd_->dctx, ZSTD_d_windowLogMax, kZstdWindowLog);
  if (ZSTD_isError(r))
    return Fail(Status::IOError("zstd", ZSTD_getErrorName(r)));

  std::string_view record;
  FERRY_RETURN_IF_ERROR(ReadRecord(&record, true));
  if (!header_.ParseFromArray(record.data(), static_cast<int>(record.size()))) {
    return Corrupt("header does not parse");
  }
  Status s = CheckHeader(header_);
  if (!s.ok()) return Corrupt(s.message());
  state_ = State::kFiles;
  record_index_ = 1;
  return Status::OK();
}

Status ManifestReader::Next(File* file, bool* done) {
  *done = false;
  if (!error_.ok()) return error_;
  if (state_ == State::kNew) {
    return Fail(Status::InvalidArgument("manifest: Next before Open"));
  }
  if (state_ == State::kDone) {
    *done = true;
    return Status::OK();
  }
  std::string_view record;
  FERRY_RETURN_IF_ERROR(ReadRecord(&record, true));
  if (record.empty()) {
    FERRY_RETURN_IF_ERROR(ReadFooter());
    state_ = State::kDone;
    *done = true;
    return Status::OK();
  }
  if (!file->ParseFromArray(record.data(), static_cast<int>(record.size()))) {
    return Corrupt("file record does not parse");
  }
  Status s = CheckFile(*file, header_.part_size(), header_.format_version());
  if (!s.ok()) return Corrupt(s.message(), file->path());
  if (file_count_ > 0 && !(last_path_ < file->path())) {
    return Corrupt("path not after the previous one, " + Printable(last_path_),
                   file->path());
  }
  if (total_bytes_ + file->size() < total_bytes_) total_overflow_ = true;
  total_bytes_ += file->size();
  last_path_ = file->path();
  ++file_count_;
  ++record_index_;
  return Status::OK();
}

Status ManifestReader::Skip(bool* done) {
  *done = false;
  if (!error_.ok()) return error_;
  if (state_ != State::kFiles) {
    return Fail(
        Status::InvalidArgument("manifest: Skip before Open or after the end"));
  }
  std::string_view record;
  FERRY_RETURN_IF_ERROR(ReadRecord(&record, false));
  *done = record.empty();
  if (*done) state_ = State::kDone;
  return Status::OK();
}

Status ManifestReader::ReadFooter() {
  ++record_index_;  // the end-of-files marker was one record
  const uint64_t records_hash = XXH3_64bits_digest(zstd_->records);
  std::string_view record;
  FERRY_RETURN_IF_ERROR(ReadRecord(&record, false));
  if (!footer_.ParseFromArray(record.data(), static_cast<int>(record.size()))) {
    return Corrupt("footer does not parse");
  }
  if (footer_.file_count() != file_count_) {
    return Corrupt("footer says " + std::to_string(footer_.file_count()) +
                   " files, the manifest has " + std::to_string(file_count_));
  }
  if (total_overflow_ || footer_.total_bytes() != total_bytes_) {
    return Corrupt("footer total_bytes does not match the files");
  }
  if (footer_.records_xxh3_64() != records_hash) {
    return Corrupt("footer records_xxh3_64 does not match the records");
  }
  // Nothing after the footer in the frame, nothing after the frame.
  while (!frame_done_) {
    if (out_pos_ != out_.size()) break;
    FERRY_RETURN_IF_ERROR(Pull());
  }
  if (out_pos_ != out_.size()) return Corrupt("bytes after the footer");
  for (;;) {
    if (in_pos_ != in_.size()) return Corrupt("bytes after the zstd frame");
    std::string_view got;
    FERRY_RETURN_IF_ERROR(ReadSource(&got));
    if (got.empty()) break;
  }
  if (check_id_) {
    Status s = VerifyId(id_hasher_, expect_id_);
    if (!s.ok()) return Fail(s);
  }
  return Status::OK();
}

// ---------------------------------------------------------------- hasher

struct FileHasher::State {
  XXH3_state_t* part = XXH3_createState();
  ~State() { XXH3_freeState(part); }
};

FileHasher::FileHasher(uint64_t part_size)
    : state_(std::make_unique<State>()),
      part_size_(part_size ? part_size : kDefaultPartSize) {
  XXH3_64bits_reset(state_->part);
}
FileHasher::~FileHasher() = default;

void FileHasher::Update(std::string_view data) {
  whole_.Update(data);
  size_ += data.size();
  while (!data.empty()) {
    const size_t take = static_cast<size_t>(
        std::min<uint64_t>(data.size(), part_size_ - in_part_));
    XXH3_64bits_update(state_->part, data.data(), take);
    data.remove_prefix(take);
    in_part_ += take;
    if (in_part_ == part_size_) {
      parts_.push_back(XXH3_64bits_digest(state_->part));
      XXH3_64bits_reset(state_->part);
      in_part_ = 0;
    }
  }
}

void FileHasher::Finish(File* file) {
  if (in_part_ > 0) {
    parts_.push_back(XXH3_64bits_digest(state_->part));
    XXH3_64bits_reset(state_->part);
    in_part_ = 0;
  }
  file->set_size(size_);
  file->set_xxh3_128(HashToBytes(whole_.Digest()));
  file->mutable_part_xxh3_64()->Assign(parts_.begin(), parts_.end());
}

}  // namespace ferry::manifest
