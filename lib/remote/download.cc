#include "remote/download.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

#include "ferry/atomic_file.h"
#include "ferry/remote.h"
#include "remote/journal.h"

namespace ferry::remote {
namespace {

Status IgnoreNotFound(Status s) { return s.IsNotFound() ? Status::OK() : s; }

}  // namespace

// XXH3-64 of a part's bytes written so far, in order from its first byte.
struct Download::PartHasher {
  PartHasher() : state(XXH3_createState()) { XXH3_64bits_reset(state); }
  ~PartHasher() { XXH3_freeState(state); }
  PartHasher(const PartHasher&) = delete;
  PartHasher& operator=(const PartHasher&) = delete;
  XXH3_state_t* state;
  uint64_t next = 0;    // the offset the hash has reached
  bool broken = false;  // bytes came out of order: read back
};

Download::Download(GetItem item, uint64_t part_size, std::string url, Env* env,
                   bool durable)
    : item_(std::move(item)),
      part_size_(std::max<uint64_t>(
          item_.part_hashes.empty() || item_.part_hash_size == 0
              ? part_size
              : item_.part_hash_size,
          1)),
      url_(std::move(url)),
      env_(env),
      durable_(durable),
      part_path_(item_.dest + ".ferry-part"),
      journal_path_(item_.dest + ".ferry-part.journal"),
      listed_(item_.have_info),
      listed_size_(item_.info.size),
      listed_etag_(item_.info.etag) {
  for (const ByteRange& r : item_.ranges) {
    for (uint64_t done = 0; done < r.length;) {
      const uint64_t n = std::min(part_size_, r.length - done);
      pieces_.push_back(ByteRange{r.offset + done, n});
      done += n;
    }
  }
}

ByteRange Download::FirstRange() const {
  return ranged() ? pieces_[0] : ByteRange{0, part_size_};
}

uint64_t Download::wanted() const {
  if (!ranged()) return size_;
  uint64_t n = 0;
  for (const ByteRange& r : pieces_) n += r.length;
  return n;
}

Download::~Download() {
  if (file_) Abandon();
}

Status Download::Open() {
  // A FIFO, a device or a socket at DEST is refused before anything is
  // made: the final rename would replace it.
  FERRY_RETURN_IF_ERROR(CheckNotSpecialFile(env_, item_.dest));
  if (item_.root.empty()) {
    FERRY_RETURN_IF_ERROR(env_->CreateDirs(DirName(item_.dest)));
  } else {  // no symbolic link below the root is followed
    FERRY_RETURN_IF_ERROR(env_->CreateDirs(item_.root));
    FERRY_RETURN_IF_ERROR(CreateDirsBelow(item_.root, DirName(item_.dest)));
  }
  FERRY_RETURN_IF_ERROR(CheckRegularOrMissing(journal_path_));
  FERRY_ASSIGN_OR_RETURN(file_, PartFile::Open(part_path_, /*wait=*/false));
  bool resumed = false;
  if (!ranged() && env_->FileExists(journal_path_)) {
    auto bytes = ReadFileToString(env_, journal_path_, 64u << 20);
    auto st = bytes.ok() ? ParseJournal(*bytes)
                         : Result<JournalState>(bytes.status());
    auto file_size = file_->Size();
    if (st.ok() && file_size.ok()) {
      const JournalHeader& h = st->header;
      bool same =
          h.part_size == part_size_ && !h.etag.empty() && h.size > part_size_ &&
          *file_size == h.size && h.have_expected == item_.have_expected &&
          (!h.have_expected || h.expected == item_.expected) &&
          (!item_.have_expected_size || h.size == item_.expected_size) &&
          (!item_.have_info ||
           (item_.info.size == h.size && item_.info.etag == h.etag));
      if (same) {
        FERRY_ASSIGN_OR_RETURN(
            journal_, JournalFile::OpenForAppend(journal_path_, durable_));
        journal_header_ = EncodeJournalHeader(h);
        known_ = true;
        size_ = h.size;
        etag_ = h.etag;
        state_.assign(h.parts(), kTodo);
        for (size_t i = 0; i < st->done.size(); ++i) {
          if (st->done[i]) {
            state_[i] = kDone;
            ++done_;
          }
        }
        resumed_bytes_ = st->done_bytes;
        resumed = true;
        FERRY_RETURN_IF_ERROR(RecheckResumedParts());
      }
    }
  }
  if (!resumed) {
    FERRY_RETURN_IF_ERROR(Discard());
    if (item_.have_info)
      FERRY_RETURN_IF_ERROR(SetKnown(item_.info.size, item_.info.etag, false));
  }
  return Status::OK();
}

Status Download::AnswerEtag(std::string_view etag) {
  if (!etag.empty() || etag_.empty() || etag_unsure_) return Status::OK();
  etag_unsure_ = true;
  if (!journal_) return Status::OK();
  // The syncer may still append records (to the removed file): harmless.
  FERRY_RETURN_IF_ERROR(IgnoreNotFound(env_->RemoveFile(journal_path_)));
  return durable_ ? env_->SyncDir(DirName(journal_path_)) : Status::OK();
}

Status Download::SetKnown(uint64_t size, std::string etag,
                          bool part0_in_flight) {
  if (item_.have_expected_size && size != item_.expected_size)
    return Status::Corruption(
        item_.key, "the server's object has " + std::to_string(size) +
                       " bytes, the manifest says " +
                       std::to_string(item_.expected_size));
  known_ = true;
  size_ = size;
  etag_ = std::move(etag);
  if (ranged()) return SetKnownRanges(part0_in_flight);
  uint64_t n = (size + part_size_ - 1) / part_size_;
  if (checks_parts() && n != item_.part_hashes.size())
    return Status::Corruption(
        item_.key, "has " + std::to_string(size) +
                       " bytes: " + std::to_string(n) + " parts, but " +
                       std::to_string(item_.part_hashes.size()) +
                       " part hashes were expected");
  state_.assign(n, kTodo);
  hashers_.clear();
  next_todo_ = 0;
  done_ = 0;
  if (part0_in_flight && n > 0) state_[0] = kInFlight;
  if (n > 1) {
    FERRY_RETURN_IF_ERROR(file_->Truncate(size));
    // Without an ETag nothing proves a later run sees the same object: such
    // a download is not journalled (and so not resumed).
    if (!etag_.empty()) {
      JournalHeader h;
      h.size = size;
      h.part_size = part_size_;
      h.have_expected = item_.have_expected;
      h.expected = item_.expected;
      h.etag = etag_;
      h.url = UrlWithoutSecrets(url_);  // no password on disk
      journal_header_ = EncodeJournalHeader(h);
      FERRY_ASSIGN_OR_RETURN(
          journal_,
          JournalFile::Create(journal_path_, journal_header_, durable_));
    }
  }
  return Status::OK();
}

Status Download::SetKnownRanges(bool part0_in_flight) {
  if (checks_parts() || item_.have_expected)
    return Status::InvalidArgument(
        item_.key, "ranges are fetched without part or object hashes");
  uint64_t end = 0;
  for (const ByteRange& r : item_.ranges) {
    if (r.length == 0 || r.offset < end || r.offset > size_ ||
        r.length > size_ - r.offset)
      return Status::Corruption(
          item_.key, "has " + std::to_string(size_) + " bytes: the range at " +
                         std::to_string(r.offset) + " of " +
                         std::to_string(r.length) +
                         " bytes is not inside it (or out of order)");
    end = r.offset + r.length;
  }
  state_.assign(pieces_.size(), kTodo);
  hashers_.clear();
  next_todo_ = 0;
  done_ = 0;
  if (part0_in_flight) state_[0] = kInFlight;
  // The file is the object's size; the bytes between the ranges stay holes.
  return file_->Truncate(size_);
}

ByteRange Download::PartRange(uint64_t part) const {
  if (ranged()) return pieces_[part];
  uint64_t off = part * part_size_;
  return ByteRange{off, std::min(part_size_, size_ - off)};
}

std::optional<uint64_t> Download::TakePart() {
  while (next_todo_ < state_.size() && state_[next_todo_] != kTodo)
    ++next_todo_;
  if (next_todo_ >= state_.size()) return std::nullopt;
  state_[next_todo_] = kInFlight;
  return next_todo_++;
}

void Download::ReturnPart(uint64_t part) {
  hashers_.erase(part);
  if (part < state_.size() && state_[part] == kInFlight) {
    state_[part] = kTodo;
    next_todo_ = std::min(next_todo_, part);
  }
}

Status Download::Write(uint64_t offset, std::string_view data) {
  FERRY_RETURN_IF_ERROR(file_->WriteAt(offset, data));
  if (!checks_parts()) return Status::OK();
  while (!data.empty()) {
    const uint64_t part = offset / part_size_;
    const uint64_t part_end = std::min(size_, (part + 1) * part_size_);
    if (offset >= part_end) break;  // past the object: Verify says so
    const size_t n = std::min<uint64_t>(data.size(), part_end - offset);
    std::unique_ptr<PartHasher>& h = hashers_[part];
    if (offset == part * part_size_) {
      h = std::make_unique<PartHasher>();
      h->next = offset;
    } else if (!h) {
      h = std::make_unique<PartHasher>();
      h->broken = true;
    }
    if (!h->broken && h->next == offset) {
      XXH3_64bits_update(h->state, data.data(), n);
      h->next += n;
    } else {
      h->broken = true;
    }
    offset += n;
    data.remove_prefix(n);
  }
  return Status::OK();
}

Result<uint64_t> Download::ReadPartHash(uint64_t part) const {
  const ByteRange r = PartRange(part);
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::string buf(std::min<uint64_t>(r.length, 1u << 20), '\0');
  Status s;
  for (uint64_t done = 0; s.ok() && done < r.length;) {
    size_t got = 0;
    s = file_->ReadAt(r.offset + done,
                      std::min<uint64_t>(buf.size(), r.length - done),
                      buf.data(), &got);
    if (s.ok() && got == 0)
      s = Status::IOError(part_path_,
                          "ends inside part " + std::to_string(part));
    XXH3_64bits_update(state, buf.data(), got);
    done += got;
  }
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  FERRY_RETURN_IF_ERROR(s);
  return h;
}

Status Download::CheckPart(uint64_t part) {
  if (!checks_parts()) return Status::OK();
  if (part >= item_.part_hashes.size())
    return Status::Corruption(
        item_.key, "part " + std::to_string(part) + " has no expected hash");
  const ByteRange r = PartRange(part);
  uint64_t got = 0;
  auto it = hashers_.find(part);
  if (it != hashers_.end() && !it->second->broken &&
      it->second->next == r.offset + r.length) {
    got = XXH3_64bits_digest(it->second->state);
  } else {
    FERRY_ASSIGN_OR_RETURN(got, ReadPartHash(part));
  }
  if (it != hashers_.end()) hashers_.erase(it);
  const uint64_t want = item_.part_hashes[part];
  if (got == want) return Status::OK();
  char buf[96];
  std::snprintf(buf, sizeof buf, "XXH3-64 %016llx, expected %016llx",
                static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(want));
  return Status::Corruption(
      item_.key, "part " + std::to_string(part) + " (bytes " +
                     std::to_string(r.offset) + "-" +
                     std::to_string(r.offset + r.length - 1) + "): " + buf);
}

Status Download::RecheckResumedParts() {
  if (!checks_parts() || state_.size() != item_.part_hashes.size())
    return Status::OK();
  for (uint64_t p = 0; p < state_.size(); ++p) {
    if (state_[p] != kDone) continue;
    FERRY_ASSIGN_OR_RETURN(uint64_t h, ReadPartHash(p));
    if (h == item_.part_hashes[p]) continue;
    state_[p] = kTodo;
    --done_;
    resumed_bytes_ -= std::min(resumed_bytes_, PartRange(p).length);
    ++bad_resumed_parts_;
  }
  return Status::OK();
}

Status Download::SyncParts(const std::vector<uint64_t>& parts) {
  if (!journal_ || parts.empty()) return Status::OK();
  // The bytes first, then the records that say they are there (without
  // durable, written in that order: a killed process's bytes are in the
  // page cache).
  if (durable_) FERRY_RETURN_IF_ERROR(file_->Sync());
  std::string records;
  for (uint64_t part : parts)
    records +=
        EncodeJournalRecord(journal_header_, part, PartRange(part).length);
  return journal_->Append(records);
}

void Download::MarkDone(uint64_t part) {
  if (state_[part] != kDone) {
    state_[part] = kDone;
    ++done_;
  }
}

Status Download::Verify(bool sync) {
  const std::string& key = item_.key;
  FERRY_ASSIGN_OR_RETURN(uint64_t have, file_->Size());
  if (have != size_) {
    return Status::IOError(key, "part file holds " + std::to_string(have) +
                                    " bytes, the object " +
                                    std::to_string(size_));
  }
  if (sync && durable_) FERRY_RETURN_IF_ERROR(file_->Sync());
  if (item_.have_expected) {
    FERRY_ASSIGN_OR_RETURN(Hash128 got, HashFile(env_, part_path_));
    if (!(got == item_.expected)) {
      journal_.reset();
      (void)IgnoreNotFound(env_->RemoveFile(journal_path_));
      (void)env_->RemoveFile(part_path_);
      file_.reset();
      return Status::Corruption(
          key, "XXH3-128 is " + got.ToHex() + ", expected " +
                   item_.expected.ToHex() + " (download removed)");
    }
  }
  // The item tells on_installed what landed: after a change during the run
  // (Restart), the object seen at the end, not the listing's.
  item_.info.size = size_;
  item_.info.etag = etag_unsure_ ? "" : etag_;
  if (listed_ && !item_.changed_dest.empty() &&
      (size_ != listed_size_ || item_.info.etag != listed_etag_))
    item_.dest = item_.changed_dest;
  return Status::OK();
}

Status Download::Publish(bool sync_dir) {
  // Again: one may have been made at DEST while the download ran.
  FERRY_RETURN_IF_ERROR(CheckNotSpecialFile(env_, item_.dest));
  FERRY_RETURN_IF_ERROR(env_->RenameFile(part_path_, item_.dest));
  journal_.reset();
  FERRY_RETURN_IF_ERROR(IgnoreNotFound(env_->RemoveFile(journal_path_)));
  Status s =
      sync_dir && durable_ ? env_->SyncDir(DirName(item_.dest)) : Status::OK();
  file_.reset();  // the lock goes last
  return s;
}

Status Download::Discard() {
  journal_.reset();
  FERRY_RETURN_IF_ERROR(IgnoreNotFound(env_->RemoveFile(journal_path_)));
  return file_->Truncate(0);
}

Status Download::Restart() {
  item_.have_info = false;  // what the listing said is stale
  known_ = false;
  size_ = 0;
  etag_.clear();
  etag_unsure_ = false;
  state_.clear();
  hashers_.clear();
  next_todo_ = done_ = resumed_bytes_ = 0;
  return Discard();
}

void Download::Abandon() {
  if (!file_) return;
  // Without a journal (or with one removed: AnswerEtag) nothing in the part
  // file can be trusted later.
  if (!journal_ || etag_unsure_) (void)env_->RemoveFile(part_path_);
  journal_.reset();
  file_.reset();
}

}  // namespace ferry::remote
