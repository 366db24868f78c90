// One object being downloaded into `DEST.ferry-part` (private to the
// transfer engine; docs/remote.md "What is on disk"). Knows the object's
// parts, which are done, in flight or to do; writes bytes at their final
// offsets; journals each part after syncing it; and at the end verifies and
// renames into place. The engine decides which part to fetch when and how;
// this class keeps the on-disk rules in one place for every backend.
//
// Thread-safety: one thread at a time.
#ifndef FERRY_LIB_REMOTE_DOWNLOAD_H_
#define FERRY_LIB_REMOTE_DOWNLOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/transfer.h"
#include "remote/part_file.h"

namespace ferry::remote {

class Download {
 public:
  // durable=false: nothing is fsynced (TransferOptions::fsync).
  Download(GetItem item, uint64_t part_size, std::string url, Env* env,
           bool durable = true);
  ~Download();

  const GetItem& item() const { return item_; }
  // Locks the part file and reads its journal: a valid journal for the same
  // object (size, ETag, part size, expected hash; and the info the item
  // brings, if any) resumes; anything else starts over. Fails when another
  // run holds the destination, or on a local IO error.
  Status Open();

  bool known() const { return known_; }
  uint64_t size() const { return size_; }
  const std::string& etag() const { return etag_; }
  // An answer to a GET of the object carried this ETag ("": none). One
  // without an ETag where the object's is known leaves the bytes'
  // version unknown: the item's info then says "" (Verify), and, with a
  // changed_dest, they land there. Its journal, which names that ETag, is
  // removed (durably) before any of the answer's bytes are written: no
  // later run resumes them as that version (the part file is discarded).
  // Call it before the answer's first byte is written.
  Status AnswerEtag(std::string_view etag);
  // The object's size and ETag, learned from a stat or the first answer.
  // Objects above the part size get a journal and a full-size part file.
  // part0_in_flight: the answer that told is fetching part 0 already.
  Status SetKnown(uint64_t size, std::string etag, bool part0_in_flight);

  uint64_t parts() const { return state_.size(); }
  // The item's part_hash_size when it brings part hashes, else the
  // engine's part size.
  uint64_t part_size() const { return part_size_; }
  // With GetItem::ranges, each range cut into pieces of at most the part
  // size: those are the parts (of unequal sizes).
  ByteRange PartRange(uint64_t part) const;
  // Only the item's ranges are fetched (GetItem::ranges).
  bool ranged() const { return !pieces_.empty(); }
  // The item's ranges cut at the part size: its parts once known (and
  // PartRange's answers before that too).
  uint64_t pieces() const { return pieces_.size(); }
  // What the first request asks for before the object is known: part 0 of
  // the object (the first piece with ranges).
  ByteRange FirstRange() const;
  // The bytes to fetch: the object's size, or the ranges' (once known).
  uint64_t wanted() const;
  // The next part to fetch (marked in flight), or nullopt.
  std::optional<uint64_t> TakePart();
  void ReturnPart(uint64_t part);  // in flight -> to do (a retry later)
  // Writes at the final offset. With part hashes, bytes that continue a
  // part from its first byte are hashed as they pass (a write at a part's
  // first byte starts its hash anew); anything else makes CheckPart read
  // the part back.
  Status Write(uint64_t offset, std::string_view data);
  // Whether the item brings part hashes.
  bool checks_parts() const { return !item_.part_hashes.empty(); }
  // A part fully written matches its XXH3-64 (OK without part hashes).
  // Corruption naming the part if not: the caller fetches it again
  // (ReturnPart) or gives up.
  Status CheckPart(uint64_t part);
  // Journalled parts a resume found bad on disk (to be fetched again).
  uint64_t bad_resumed_parts() const { return bad_resumed_parts_; }
  // The part's bytes are all written: synced and journalled.
  Status PartDone(uint64_t part) {
    if (journalled()) FERRY_RETURN_IF_ERROR(SyncParts({part}));
    MarkDone(part);
    return Status::OK();
  }
  // PartDone in two steps, so that syncs can run on another thread while
  // the loop goes on writing other parts: SyncParts makes the parts' bytes
  // durable (one fdatasync of the part file) and then journals them (one
  // synced append); it may run on another thread than the other calls as
  // long as the download is not restarted, abandoned, finished or
  // destroyed meanwhile. MarkDone counts a part done (after its sync).
  Status SyncParts(const std::vector<uint64_t>& parts);
  void MarkDone(uint64_t part);
  bool AllDone() const { return known_ && done_ == state_.size(); }
  uint64_t resumed_bytes() const { return resumed_bytes_; }

  // Verifies (size; XXH3-128 when expected) and renames into place. A hash
  // mismatch removes the part file and its journal: Corruption.
  Status Finish() {
    FERRY_RETURN_IF_ERROR(Verify(/*sync=*/true));
    return Publish(/*sync_dir=*/true);
  }
  // Finish in two steps, so that many small files can share one syncfs:
  // Verify without sync, then (after the caller synced the file system)
  // Publish without syncing the folder (the caller syncs each folder once).
  // Verify sets the item's info to what landed and, when that is not the
  // version its info named at the start, its dest to its changed_dest.
  Status Verify(bool sync);
  Status Publish(bool sync_dir);
  // Whether parts are journalled (and so synced as they complete).
  bool journalled() const { return journal_ != nullptr; }
  bool durable() const { return durable_; }
  // The object changed: everything fetched is discarded, size and ETag are
  // unknown again.
  Status Restart();
  // A failure: the part file and journal stay for a later run.
  void Abandon();

 private:
  Status Discard();
  // XXH3-64 of a part as the part file holds it.
  Result<uint64_t> ReadPartHash(uint64_t part) const;
  // Drops journalled parts that no longer match their hashes.
  Status RecheckResumedParts();
  // SetKnown for an item with ranges.
  Status SetKnownRanges(bool part0_in_flight);
  struct PartHasher;

  GetItem item_;
  uint64_t part_size_;
  std::string url_;
  Env* env_;
  bool durable_;
  std::string part_path_, journal_path_;
  std::unique_ptr<PartFile> file_;
  std::unique_ptr<JournalFile> journal_;
  std::string journal_header_;
  // The item's info as given (have_info): the version dest may hold.
  const bool listed_;
  const uint64_t listed_size_;
  const std::string listed_etag_;
  bool known_ = false;
  uint64_t size_ = 0;
  std::string etag_;
  bool etag_unsure_ = false;  // an answer carried no ETag (AnswerEtag)
  enum : uint8_t { kTodo, kInFlight, kDone };
  std::vector<uint8_t> state_;
  std::vector<ByteRange> pieces_;  // GetItem::ranges cut at the part size
  uint64_t next_todo_ = 0;
  uint64_t done_ = 0;
  uint64_t resumed_bytes_ = 0;
  uint64_t bad_resumed_parts_ = 0;
  // Streaming hashes of the parts being written (part hashes only).
  std::map<uint64_t, std::unique_ptr<PartHasher>> hashers_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_DOWNLOAD_H_
