// GetObjects: the download side of the transfer engine (docs/remote.md).
// HTTP-speaking backends go through one libcurl multi handle driven by one
// event loop on the calling thread; other backends (files) are copied with
// Backend::Read under the same part-file and journal rules (download.h).
#include <curl/curl.h>

#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ferry/transfer.h"
#include "remote/byteranges.h"
#include "remote/curl_util.h"
#include "remote/download.h"
#include "remote/http.h"
#include "remote/multi_loop.h"
#include "remote/opener.h"
#include "remote/part_syncer.h"
#include "remote/publisher.h"
#include "remote/range_check.h"
#include "remote/redirect.h"
#include "remote/retry.h"
#include "remote/token_bucket.h"
#include "remote/transfer_util.h"

namespace ferry {
namespace remote {
namespace {

struct Obj {
  std::unique_ptr<Download> dl;
  bool probing = false;  // the first GET, which learns size and ETag
  bool stream = false;   // that GET got the whole object (Range ignored)
  int restarts = 0;
  uint64_t fetched = 0;    // bytes written in this run (lost by a restart)
  bool ranged = false;     // a 206 came for it in this run: Range works
  std::string origin;      // the URL the backend names it by
  RedirectState redirect;  // where its requests go now
  std::map<uint64_t, int> part_retries;  // bad part hashes, by part
  // Its ranges go one per GET from now on: a multi-range GET of it failed,
  // or the server answered one with a single range.
  bool single_ranges = false;
  // Why its next request is a retry (a multi-range GET of it failed and
  // its parts went back): counted when that one is sent.
  std::string retry_cause;
  // Parts whose range the endgame split: how many more of their pieces
  // must land before the part is checked.
  std::map<uint64_t, int> pieces_left;
  int stalled_swaps = 0;  // its stalled requests the endgame replaced
};

struct Req : LoopRequest {
  Obj* obj = nullptr;
  uint64_t part = 0;
  ByteRange range;     // what this attempt asks for
  bool whole = false;  // asked without a Range: the object is one part
  bool probe = false;
  std::string if_match;
  uint64_t received = 0;  // body bytes kept by this attempt
  std::optional<GetAnswer> answer;
  Status body_status;
  bool complete = false;       // judged complete at its headers (no body due)
  bool overran = false;        // the body went past the range asked
  bool range_ignored = false;  // a 200 with the whole object to a part
  // The endgame cut its range short (range.length): the body the server
  // still sends past it is not kept, and the request ends there.
  bool cut = false;
  bool cut_reached = false;
  uint64_t started_us = 0;    // when it was sent
  uint64_t last_body_us = 0;  // when its last body bytes came
  int hops = 0;               // the object's redirects when it was sent
  // The last kept bytes, not yet written: libcurl hands bodies over 16 KiB
  // at a time, and a pwrite each was 65,536 system calls per GiB.
  std::string unwritten;
  // A multi-range GET (GetItem::ranges over http(s)): its parts, their
  // ranges and the bytes each got so far; empty for a GET of one range.
  std::vector<uint64_t> parts;
  std::vector<ByteRange> ranges;
  std::vector<uint64_t> got;
  // Parts of a multipart/byteranges answer that came whole (their bytes
  // and the boundary after them).
  std::vector<bool> closed;
  size_t current = 0;  // the part whose bytes come now
  // A multipart/byteranges answer's reader; none when the server answered
  // with one of the ranges (r->answer set, r->current that range).
  std::unique_ptr<ByterangesReader> reader;
  // The server answered 200 (the whole object) to the GET of several
  // ranges: it serves them one at a time, if at all.
  bool multi_refused = false;
};

// A multi-range GET asks for at most this many ranges (a Range header of
// ~1.5 KB: nginx takes 8 KiB header lines, Apache 200 ranges by default)
// and at most the part size in all, so that big fetches still go as
// several GETs at once.
constexpr size_t kMaxRangesPerGet = 64;

constexpr size_t kWriteBatch = 256u << 10;

// The endgame (docs/remote.md "Connections"): once every part is asked for,
// a connection is free and the run's rate fell below kEndgameRate of its
// best, a part's request that got nothing for kStalledUs gives all it has
// left to a new request; else, when fewer requests are in flight than in
// the best window, the one with the most bytes to come is split across the
// free connections (never pieces below kMinPiece). Rates are measured over
// kRateWindowUs.
constexpr uint64_t kMinPiece = 256u << 10;
constexpr double kEndgameRate = 0.7;
constexpr uint64_t kRateWindowUs = 100000;
constexpr uint64_t kStalledUs = 500000;
// A split is worth its request when the bytes left would take longer than
// this at the request's own rate so far.
constexpr uint64_t kSplitWorthUs = 300000;
// Pieces at least this big are written as they come (libcurl hands over
// up to its 256 KiB buffer when the socket has that much).
constexpr size_t kDirectWrite = 64u << 10;

// Journalled parts a resume found bad and fetches again.
void CountBadResumedParts(const Download& dl, TransferReport* report) {
  if (dl.bad_resumed_parts() > 0)
    report->retries["part-hash"] += dl.bad_resumed_parts();
}

// An item is at its final name: counted, and the caller told.
void Installed(const GetItem& item, const TransferOptions& opt,
               ProgressTicker* progress, TransferReport* report) {
  ++report->files_done;
  progress->FileDone();
  if (opt.on_installed) opt.on_installed(item);
}

// Counts what the publisher put into place (or failed to).
void CountPublished(Publisher* publisher, const TransferOptions& opt,
                    ProgressTicker* progress, TransferReport* report) {
  Publisher::Outcome out = publisher->TakeOutcome();
  report->files_done += out.done;
  for (uint64_t i = 0; i < out.done; ++i) progress->FileDone();
  if (opt.on_installed)
    for (const GetItem& item : out.installed) opt.on_installed(item);
  report->files_failed += out.failures.size();
  for (auto& f : out.failures) report->failures.push_back(std::move(f));
}

class GetEngine : public CurlMultiLoop::Client {
 public:
  GetEngine(HttpBackend* backend, std::vector<GetItem> items,
            const TransferOptions& options, Env* env, TransferReport* report)
      : backend_(backend),
        fds_(PlanDescriptors(options.connections)),
        opener_(std::move(items), options.part_size, backend->Describe(), env,
                options.fsync, fds_.ahead),
        opt_(WithinDescriptors(options)),
        env_(env),
        report_(report),
        loop_(backend->settings(), opt_,
              {.buffer_size = 256L << 10, .pace_start = true}, report),
        progress_(loop_.progress()) {
    progress_.SetFilesTotal(opener_.size());
  }

  Status Run() {
    Status s = loop_.Run(this);
    syncer_.Close();
    publisher_.Close();
    Published();
    FERRY_RETURN_IF_ERROR(s);
    progress_.Tick(true);
    return Status::OK();
  }

  // CurlMultiLoop::Client
  bool StartRequest() override {
    for (auto& o : open_)
      if (StartOne(o.get())) return true;
    return !opener_.More() && StartEndgame();
  }

  size_t OpenCount() const override { return open_.size(); }
  bool MoreToOpen() const override { return opener_.More(); }

  Status Prepare(LoopRequest* lr) override {
    Req* r = static_cast<Req*>(lr);
    const std::string& key = r->obj->dl->item().key;
    if (r->parts.empty()) {
      FERRY_ASSIGN_OR_RETURN(r->http,
                             backend_->MakeGet(key, asked(r), r->if_match));
    } else {
      FERRY_ASSIGN_OR_RETURN(
          r->http, backend_->MakeMultiGet(key, r->ranges, r->if_match));
      r->got.assign(r->parts.size(), 0);
      r->closed.assign(r->parts.size(), false);
      r->reader.reset();
      r->multi_refused = false;
    }
    // After a redirect every request goes to where it led (parts too).
    Obj* o = r->obj;
    if (o->origin.empty()) o->origin = r->http.url;
    ApplyRedirect(o->redirect, &r->http);
    r->hops = o->redirect.hops;
    r->received = 0;
    r->unwritten.clear();
    r->answer.reset();
    r->body_status = Status::OK();
    r->complete = false;
    r->overran = false;
    r->range_ignored = false;
    r->cut_reached = false;
    r->started_us = r->last_body_us = NowMicros();
    r->ex.on_headers = [this, r](CurlExchange& e) { return OnHeaders(r, e); };
    r->ex.on_body = [this, r](CurlExchange& e, std::string_view data) {
      return OnBody(r, e, data);
    };
    return Status::OK();
  }

  void OnStartFailed(LoopRequest* lr, const Status& s) override {
    Req* r = static_cast<Req*>(lr);
    Obj* o = r->obj;
    running_.erase(r);
    loop_.Delete(r);
    Fail(o, s);
  }

  void OnTurn() override {
    Synced();
    Published();
    const uint64_t now = NowMicros();
    // A request the token bucket holds (--bwlimit) waits on this run, not
    // on its server: not stalled.
    for (Req* r : running_)
      if (r->paused) r->last_body_us = now;
    if (rate_since_us_ == 0) {
      rate_since_us_ = now;
      rate_bytes_ = report_->bytes;
    } else if (now - rate_since_us_ >= kRateWindowUs) {
      rate_ =
          double(report_->bytes - rate_bytes_) / double(now - rate_since_us_);
      const size_t peak = loop_.TakePeak();
      if (rate_ > best_rate_) {
        best_rate_ = rate_;
        best_active_ = peak;
      }
      rate_since_us_ = now;
      rate_bytes_ = report_->bytes;
    }
  }
  size_t Held() const override { return syncer_.pending(); }

 private:
  bool StartOne(Obj* o) {
    Download& dl = *o->dl;
    if (!dl.known()) {
      if (o->probing) return false;
      o->probing = true;
      if (StartMultiProbe(o)) return true;
      // One request learns size and ETag and fetches the first part: no
      // HEAD round trip per object.
      Req* r = NewReq(o, 0, dl.FirstRange(), "");
      r->probe = true;
      loop_.Start(r);
      return true;
    }
    auto part = o->stream ? std::nullopt : dl.TakePart();
    if (!part) return false;
    if (StartMulti(o, *part)) return true;
    Req* r = NewReq(o, *part, dl.PartRange(*part), dl.etag());
    // An object of one part needs no Range (s3rver, for one, mishandles
    // "bytes=0-0"): a plain GET, its ETag checked.
    r->whole = dl.parts() == 1 && !dl.ranged();
    if (!r->whole) running_.insert(r);
    loop_.Start(r);
    return true;
  }

  // Over http(s), the ranges of an item that wants only some go several to
  // a GET (as zsync asks): fewer requests, fewer header bytes on the wire.
  bool MultiRangeFor(const Obj* o) const {
    return o->dl->ranged() && !o->single_ranges && backend_->multi_range();
  }
  // Whether range may join the GET of ranges (bytes in all): within the
  // caps, and not adjacent to the last one (RFC 9110 lets a server coalesce
  // adjacent ranges into one part).
  bool JoinsGet(const std::vector<ByteRange>& ranges, uint64_t bytes,
                const ByteRange& range) const {
    return ranges.size() < kMaxRangesPerGet &&
           bytes + range.length <= opt_.part_size &&
           range.offset > ranges.back().offset + ranges.back().length;
  }
  void StartMultiReq(Obj* o, std::vector<uint64_t> parts,
                     std::vector<ByteRange> ranges, bool probe) {
    Req* r = NewReq(o, parts[0], ranges[0], probe ? "" : o->dl->etag());
    r->probe = probe;
    r->parts = std::move(parts);
    r->ranges = std::move(ranges);
    loop_.Start(r);
  }

  // part is taken already; false (part still taken) when it goes alone.
  bool StartMulti(Obj* o, uint64_t part) {
    Download& dl = *o->dl;
    if (!MultiRangeFor(o) || dl.etag().empty()) return false;
    std::vector<uint64_t> parts{part};
    std::vector<ByteRange> ranges{dl.PartRange(part)};
    uint64_t bytes = ranges[0].length;
    while (auto next = dl.TakePart()) {
      ByteRange range = dl.PartRange(*next);
      if (!JoinsGet(ranges, bytes, range)) {
        dl.ReturnPart(*next);
        break;
      }
      bytes += range.length;
      parts.push_back(*next);
      ranges.push_back(range);
    }
    if (parts.size() == 1) return false;
    StartMultiReq(o, std::move(parts), std::move(ranges), false);
    return true;
  }

  // The first GET of an item with ranges, which learns the object's size
  // and ETag, asks for its first pieces together too (no condition, as any
  // first request): false when one piece goes alone.
  bool StartMultiProbe(Obj* o) {
    Download& dl = *o->dl;
    if (!MultiRangeFor(o) || dl.pieces() < 2) return false;
    std::vector<uint64_t> parts{0};
    std::vector<ByteRange> ranges{dl.PartRange(0)};
    uint64_t bytes = ranges[0].length;
    for (uint64_t p = 1; p < dl.pieces(); ++p) {
      ByteRange range = dl.PartRange(p);
      if (!JoinsGet(ranges, bytes, range)) break;
      bytes += range.length;
      parts.push_back(p);
      ranges.push_back(range);
    }
    if (parts.size() == 1) return false;
    StartMultiReq(o, std::move(parts), std::move(ranges), true);
    return true;
  }

  // A multi-range probe's answer told the object's size and ETag: the
  // object is known, with the probe's parts in flight.
  Status BecomeKnown(Req* r, std::optional<uint64_t> total,
                     const std::string& etag) {
    Obj* o = r->obj;
    if (!total)
      return Status::Unavailable(r->http.url,
                                 "the answer does not say the object's size");
    FERRY_RETURN_IF_ERROR(
        o->dl->SetKnown(*total, etag, /*part0_in_flight=*/true));
    for (size_t i = 1; i < r->parts.size(); ++i) {
      auto p = o->dl->TakePart();  // 1, 2, ...: the probe's parts, in order
      if (!p || *p != r->parts[i])
        return Status::IOError(r->http.url, "a probe's parts went astray");
    }
    progress_.AddTotal(o->dl->wanted(), 0);
    o->probing = false;
    r->probe = false;
    r->if_match = etag;
    return Status::OK();
  }

  void OpenNext() override {
    // Created, locked and checked for a journal on the opener's thread.
    auto [dl, s] = opener_.Next();
    auto o = std::make_unique<Obj>();
    o->dl = std::move(dl);
    Obj* raw = o.get();
    open_.push_back(std::move(o));
    if (!s.ok()) return Fail(raw, s);
    report_->bytes_resumed += raw->dl->resumed_bytes();
    CountBadResumedParts(*raw->dl, report_);
    if (raw->dl->known()) {
      progress_.AddTotal(raw->dl->wanted(), raw->dl->resumed_bytes());
      if (raw->dl->AllDone()) Finish(raw);
    }
  }

  // Requests of o leave running_ before the loop deletes them.
  void Forget(const Obj* o) {
    std::erase_if(running_, [o](const Req* r) { return r->obj == o; });
  }

  // Whether r may give bytes to another request: a part's single range,
  // its answer judged (a 206 for that range), not one stream of a whole
  // object.
  static bool Splittable(const Req* r) {
    const Obj* o = r->obj;
    return r->answer && !r->probe && !r->whole && r->parts.empty() &&
           !o->stream && o->ranged && !o->dl->etag().empty() &&
           r->answer->length == r->range.length && !r->cut_reached &&
           r->received <= r->range.length;
  }

  // The endgame: a free connection takes over bytes of a part still in
  // flight while the link carries less than it did (a lone last flow paced
  // at its old share, docs/remote.md "Connections"; or one that stalled).
  bool StartEndgame() {
    // The run's rate fell (a request that went silent is replaced then).
    if (running_.empty() || best_rate_ <= 0 ||
        rate_ >= kEndgameRate * best_rate_)
      return false;
    const uint64_t now = NowMicros();
    Req* pick = nullptr;
    uint64_t most = 0;
    bool stalled = false;
    for (Req* r : running_) {
      // A request's own rate means something after a window (a piece just
      // sent is not split again).
      if (!Splittable(r) || now - r->started_us < kRateWindowUs) continue;
      const uint64_t left = r->range.length - r->received;
      const bool still = now - r->last_body_us >= kStalledUs;
      if (left == 0) continue;
      if ((still && !stalled) || (still == stalled && left > most)) {
        pick = r;
        most = left;
        stalled = still;
      }
    }
    if (pick == nullptr) return false;
    Obj* o = pick->obj;
    if (stalled && o->stalled_swaps >= opt_.max_retries) return false;
    if (stalled) {
      ++o->stalled_swaps;
      // Nothing came for a while: all it has left goes to a new request,
      // and it ends now (what it kept goes into the part file first).
      if (!WriteKept(pick).ok()) return false;
      Req* r = NewReq(o, pick->part,
                      ByteRange{pick->range.offset + pick->received, most},
                      o->dl->etag());
      running_.erase(pick);
      loop_.Delete(pick);
      r->retry_cause = "stalled";
      running_.insert(r);
      loop_.Start(r);
      return true;
    }
    // Under --bwlimit the token bucket sets the pace: more requests would
    // not raise it, and a cut request's bytes past the cut (buffered while
    // the bucket held it) would be discarded.
    if (opt_.bwlimit > 0) return false;
    // The tail: fewer requests than carried the best rate. While as many
    // run, a dip is the server's or the link's, and a split would only
    // cost the bytes sent past its cut.
    if (loop_.Active() >= best_active_) return false;
    // Worth it only where the rest would take a while at the rate this
    // request has had (a fast link's last parts end by themselves).
    const uint64_t took = std::max<uint64_t>(now - pick->started_us, 1);
    if (most < 2 * kMinPiece ||
        double(most) * double(took) <
            double(kSplitWorthUs) *
                double(std::max<uint64_t>(pick->received, 1)))
      return false;
    // Into as many pieces as connections are free, and the request keeps
    // the first: the idle connections' flows together carry what the lone
    // one could not (each paced at its old share).
    const uint64_t ways =
        std::min<uint64_t>(loop_.Free() + 1, most / kMinPiece);
    if (ways < 2) return false;
    const uint64_t piece = most / ways;
    const uint64_t begin = pick->range.offset + pick->received;
    const uint64_t end = pick->range.offset + pick->range.length;
    const uint64_t keep = pick->received + piece;
    pick->range.length = keep;
    pick->answer->length = keep;
    pick->cut = true;
    for (uint64_t i = 1; i < ways; ++i) {
      const uint64_t from = begin + i * piece;
      const uint64_t to = i + 1 == ways ? end : from + piece;
      Req* r = NewReq(o, pick->part, ByteRange{from, to - from}, o->dl->etag());
      ++o->pieces_left[pick->part];
      running_.insert(r);
      loop_.Start(r);
    }
    return true;
  }

  Req* NewReq(Obj* o, uint64_t part, ByteRange range, std::string if_match) {
    Req* r = loop_.Add(std::make_unique<Req>());
    r->owner = o;
    r->obj = o;
    r->part = part;
    r->range = range;
    r->if_match = std::move(if_match);
    r->retry_cause = std::exchange(o->retry_cause, std::string());
    return r;
  }

  static std::optional<ByteRange> asked(const Req* r) {
    if (r->whole) return std::nullopt;
    return r->range;
  }

  // Judges a success's status, Content-Range and ETag as soon as its
  // headers are in, so that an answer with no body to come is judged too.
  // One that promises a body where none is due (s3rver's empty object) is
  // complete here: nothing is waited for.
  bool OnHeaders(Req* r, CurlExchange& e) {
    const HttpResponse& response = e.response;
    bool judge = (response.status >= 200 && response.status < 300) ||
                 (r->probe && response.status == 416);
    if (!judge) return true;
    if (response.status == 416 && !r->answer) {  // a probe's
      r->body_status = WrongSize(r->obj, response);
      if (!r->body_status.ok()) return false;
    }
    if (!r->parts.empty()) return r->answer || AcceptMulti(r, response);
    if (!r->answer && !Accept(r, response)) return false;
    if (r->answer->length != 0) return true;
    const std::string* cl = FindHeader(response.headers, "content-length");
    if (cl == nullptr || *cl == "0") return true;  // ends by itself
    r->complete = true;
    return false;
  }

  bool OnBody(Req* r, CurlExchange& e, std::string_view data) {
    if (e.response.status < 200 || e.response.status >= 300) {
      if (e.response.body.size() < (64u << 10)) e.response.body.append(data);
      return true;
    }
    if (!r->parts.empty()) return OnMultiBody(r, e, data);
    if (!r->answer && !Accept(r, e.response)) return false;
    r->last_body_us = NowMicros();
    if (r->cut && r->received + data.size() >= r->answer->length) {
      // The endgame gave the rest to another request: kept up to the cut,
      // then this one ends (its connection with it).
      data = data.substr(0, r->answer->length - r->received);
      r->cut_reached = true;
    }
    if (r->received + data.size() > r->answer->length) {  // never written
      r->overran = true;
      r->body_status =
          Status::Unavailable(r->http.url, "body longer than asked");
      return false;
    }
    if (r->unwritten.empty() && data.size() >= kDirectWrite) {
      // A big piece goes straight to the file: no copy into the batch.
      Status s = r->obj->dl->Write(r->range.offset + r->received, data);
      if (!s.ok()) {
        r->body_status = s;
        return false;
      }
      r->received += data.size();
    } else {
      if (r->unwritten.empty()) r->unwritten.reserve(kWriteBatch);
      r->unwritten.append(data);
      r->received += data.size();
    }
    if (r->unwritten.size() >= kWriteBatch) {
      Status s = WriteKept(r);
      if (!s.ok()) {
        r->body_status = s;
        return false;
      }
    }
    CountFetched(r, data.size());
    return !r->cut_reached;
  }

  // Bytes of an answer kept: counted for the object, the run and progress.
  void CountFetched(Req* r, size_t n) {
    r->obj->fetched += n;
    report_->bytes += n;
    progress_.AddDone(n);
  }

  // Judges the answer's headers before any byte is kept. A probe's answer
  // makes the object known; the probe then is the request for part 0.
  bool Accept(Req* r, const HttpResponse& response) {
    if (r->obj->dl->ranged() && response.status == 200)
      return RefuseWhole(r, response);
    auto a =
        CheckGetAnswer(r->http.url, asked(r), r->if_match, r->probe, response);
    if (!a.ok()) {
      r->body_status = a.status();
      if (!r->probe && !r->whole && IgnoresRange(r, response)) {
        // Its parts cannot be had: start over, as one stream from 0 (the
        // probe takes the 200), never mixing it with the part file.
        r->range_ignored = true;
        r->body_status = Status::FailedPrecondition(
            r->http.url,
            "the server ignores Range (answered 200 with the whole object)");
      }
      return false;
    }
    // The same ETag and another size: the object changed all the same.
    const Download& dl = *r->obj->dl;
    if (!r->probe && dl.known() && a->total && *a->total != dl.size()) {
      r->body_status = Status::FailedPrecondition(
          r->http.url, "object changed (its size is " +
                           std::to_string(*a->total) + ", was " +
                           std::to_string(dl.size()) + ")");
      return false;
    }
    if (r->whole) {  // a 200: its size must be the object's
      if (a->length == ByteRange::kToEnd) a->length = r->range.length;
      if (a->length != r->range.length) {
        r->body_status = Status::FailedPrecondition(
            r->http.url, "object changed (answered " +
                             std::to_string(a->length) + " bytes, it had " +
                             std::to_string(r->range.length) + ")");
        return false;
      }
    }
    if (r->probe) {
      Obj* o = r->obj;
      if (!a->total) {
        r->body_status = Status::Unavailable(
            r->http.url, "the answer does not say the object's size");
        return false;
      }
      Status s = o->dl->SetKnown(*a->total, a->etag, /*part0_in_flight=*/true);
      if (!s.ok()) {
        r->body_status = s;
        return false;
      }
      progress_.AddTotal(o->dl->wanted(), 0);
      o->probing = false;
      r->probe = false;
      r->part = 0;
      r->if_match = a->etag;
      r->range = *a->total == 0 ? ByteRange{0, 0} : o->dl->PartRange(0);
      if (a->length > r->range.length) {  // a 200: the whole object comes
        r->range = ByteRange{0, *a->total};
        o->stream = true;  // one stream, no other part asked (as curl)
        while (o->dl->TakePart()) {
        }  // all in flight: a bad one goes back alone
      }
    }
    if (Status s = r->obj->dl->AnswerEtag(a->etag); !s.ok()) {
      r->body_status = s;
      return false;
    }
    if (response.status == 206) r->obj->ranged = true;
    r->answer = *a;
    return true;
  }

  // Judges the headers of a multi-range GET's answer before any byte is
  // kept: a 206 multipart/byteranges (its parts are checked as they come),
  // or a 206 with exactly one of the ranges asked (a server that serves
  // only one: the rest go one per GET). Anything else is never data.
  bool AcceptMulti(Req* r, const HttpResponse& response) {
    if (response.status == 200) {
      // Never data. If-Range failed (another ETag): the object changed.
      // Else the server does not serve several ranges at once (nginx's
      // max_ranges, Apache's MaxRanges, a CDN, one that ignores Range):
      // the ranges go one per GET (a first one refused with 200 too means
      // the server ignores Range, and sync takes the whole object).
      if (!r->probe) {
        auto a =
            CheckGetAnswer(r->http.url, r->range, r->if_match, false, response);
        if (!a.ok() && a.status().IsFailedPrecondition()) {
          r->body_status = a.status();
          return false;
        }
      }
      r->multi_refused = true;
      r->body_status = Status::Unavailable(
          r->http.url, "answered 200 (the whole object) to a GET of " +
                           std::to_string(r->ranges.size()) + " ranges");
      return false;
    }
    const std::string* type = FindHeader(response.headers, "content-type");
    std::optional<std::string> boundary =
        type ? ByterangesBoundary(*type) : std::nullopt;
    if (response.status == 206 && boundary) {
      // If-Range held, so the ETag can only be the one sent.
      GetAnswer a;
      if (const std::string* etag = FindHeader(response.headers, "etag"))
        a.etag = *etag;
      if (!r->probe && !a.etag.empty() && a.etag != r->if_match) {
        r->body_status = Status::FailedPrecondition(
            r->http.url, "object changed (ETag " + a.etag + ", expected " +
                             r->if_match + ")");
        return false;
      }
      if (Status s = r->obj->dl->AnswerEtag(a.etag); !s.ok()) {
        r->body_status = s;
        return false;
      }
      r->obj->ranged = true;  // a 206: Range works
      r->reader = std::make_unique<ByterangesReader>(
          *boundary,
          [this, r](const ContentRange& cr) { return MultiPart(r, cr); },
          [this, r](std::string_view data) { return MultiData(r, data); },
          [r] { r->closed[r->current] = true; });
      r->answer = a;
      return true;
    }
    // One range: it must be one of those asked, whole.
    const std::string* cr_text = FindHeader(response.headers, "content-range");
    auto cr = cr_text ? ParseContentRange(*cr_text) : std::nullopt;
    for (size_t i = 0; cr && i < r->ranges.size(); ++i) {
      if (r->ranges[i].offset != cr->first) continue;
      auto a = CheckGetAnswer(r->http.url, r->ranges[i], r->if_match, false,
                              response);
      if (!a.ok()) break;
      if (r->probe) {
        if (Status s = BecomeKnown(r, a->total, a->etag); !s.ok()) {
          r->body_status = s;
          return false;
        }
      } else if (a->total && *a->total != r->obj->dl->size()) {
        r->body_status = Status::FailedPrecondition(
            r->http.url, "object changed (its size is " +
                             std::to_string(*a->total) + ", was " +
                             std::to_string(r->obj->dl->size()) + ")");
        return false;
      }
      if (Status s = r->obj->dl->AnswerEtag(a->etag); !s.ok()) {
        r->body_status = s;
        return false;
      }
      r->obj->ranged = true;
      r->current = i;
      r->answer = *a;
      return true;
    }
    auto a =
        CheckGetAnswer(r->http.url, r->ranges[0], r->if_match, false, response);
    r->body_status =
        !a.ok()
            ? a.status()
            : Status::Unavailable(
                  r->http.url,
                  "answered " + (cr_text ? *cr_text : "") + " to a GET of " +
                      std::to_string(r->ranges.size()) + " ranges");
    return false;
  }

  // A part of a multipart/byteranges answer begins: it must be one of the
  // ranges asked, not yet had, of the object's size.
  Status MultiPart(Req* r, const ContentRange& cr) {
    if (r->probe)
      FERRY_RETURN_IF_ERROR(BecomeKnown(r, cr.total, r->answer->etag));
    const Download& dl = *r->obj->dl;
    if (!cr.total) {
      return Status::Unavailable(
          r->http.url, "a part of the answer does not say the object's size");
    }
    if (*cr.total != dl.size()) {
      return Status::FailedPrecondition(
          r->http.url, "object changed (its size is " +
                           std::to_string(*cr.total) + ", was " +
                           std::to_string(dl.size()) + ")");
    }
    for (size_t i = 0; i < r->ranges.size(); ++i) {
      const ByteRange& want = r->ranges[i];
      if (want.offset == cr.first && want.offset + want.length - 1 == cr.last &&
          r->got[i] == 0) {
        r->current = i;
        return Status::OK();
      }
    }
    return Status::Unavailable(
        r->http.url,
        "a part of the answer is bytes " + std::to_string(cr.first) + "-" +
            std::to_string(cr.last) + ", not one of the ranges asked");
  }

  // Bytes of the current part: written at their offsets.
  Status MultiData(Req* r, std::string_view data) {
    const size_t i = r->current;
    if (r->got[i] + data.size() > r->ranges[i].length) {
      return Status::Unavailable(r->http.url, "body longer than asked");
    }
    FERRY_RETURN_IF_ERROR(
        r->obj->dl->Write(r->ranges[i].offset + r->got[i], data));
    r->got[i] += data.size();
    CountFetched(r, data.size());
    return Status::OK();
  }

  bool OnMultiBody(Req* r, CurlExchange& e, std::string_view data) {
    if (!r->answer && !AcceptMulti(r, e.response)) return false;
    Status s = r->reader ? r->reader->Feed(data) : MultiData(r, data);
    if (s.ok()) return true;
    r->body_status = s;
    return false;
  }

  // A 416 that gives the object's size ("bytes */N") when the manifest
  // said another: the object is not the one the manifest names (a pack
  // shorter than its pack_size). Corruption, at once, as SetKnown says of a
  // size seen in a 206; OK otherwise (a 416 alone means the object shrank
  // since it was known: started over).
  static Status WrongSize(const Obj* o, const HttpResponse& response) {
    const GetItem& item = o->dl->item();
    const std::string* cr = FindHeader(response.headers, "content-range");
    auto parsed = cr ? ParseContentRange(*cr) : std::nullopt;
    if (!item.have_expected_size || !parsed || !parsed->unsatisfied ||
        !parsed->total || *parsed->total == item.expected_size)
      return Status::OK();
    return Status::Corruption(item.key, "the server's object has " +
                                            std::to_string(*parsed->total) +
                                            " bytes, the manifest says " +
                                            std::to_string(item.expected_size));
  }

  // A multi-range GET ended. The parts it brought whole are done, whatever
  // else happened (unless the object changed); the others go back, to be
  // asked one per GET from now on if this one failed or the server
  // answered with one range. A failure is retried that way, not again as
  // a multi-range GET, so it costs one request more at most.
  void OnMultiDone(Req* r, CURLcode rc, long status) {
    Obj* o = r->obj;
    Status s;
    if (rc == CURLE_OK) {
      if (!r->answer && status == 416 &&
          !(s = WrongSize(o, r->ex.response)).ok()) {
        // not the object the manifest names
      } else if (!r->answer && status == 416) {
        s = Status::FailedPrecondition(
            r->http.url,
            "object changed (416: the ranges asked are past its end)");
      } else if (!r->answer && (status < 200 || status >= 300)) {
        s = backend_->ErrorFor(o->dl->item().key, r->ex.response);
      } else if (!r->answer && !AcceptMulti(r, r->ex.response)) {
        s = r->body_status;
      } else if (r->reader) {
        s = r->reader->Finish();
      }
    } else if (!r->body_status.ok()) {
      s = r->body_status;
    } else {
      s = CurlError(r->http.url, rc, r->ex.error);
    }
    if (s.IsFailedPrecondition()) {
      ++report_->retries["changed"];
      loop_.Delete(r);
      return Restart(o, s);
    }
    if (!s.ok() && !RetryPolicy::IsRetryable(s)) {
      loop_.Delete(r);
      return Fail(o, s);
    }
    // Counted when the object's next request goes (NewReq).
    if (!s.ok() && !r->multi_refused) {
      o->retry_cause =
          r->body_status.ok() ? RetryCause(rc, status) : std::string("content");
    }
    // A server that answered with one range serves them one at a time.
    const bool one_range = r->answer && !r->reader;
    if (!s.ok() || one_range) o->single_ranges = true;
    // A probe that did not make the object known: the next one goes alone.
    if (!o->dl->known()) o->probing = false;
    Status done;
    for (size_t i = 0; i < r->parts.size(); ++i) {
      // A multipart answer's part is whole once the boundary after it came
      // (else the server may have sent fewer bytes than it said, and the
      // last ones counted were its framing).
      if (r->reader ? r->closed[i] : r->got[i] == r->ranges[i].length) {
        if (done.ok()) done = o->dl->PartDone(r->parts[i]);
      } else {
        // Not had whole (a server that left it out of its answer too):
        // asked again alone.
        o->single_ranges = true;
        o->dl->ReturnPart(r->parts[i]);
      }
    }
    loop_.Delete(r);
    if (!done.ok()) return Fail(o, done);
    if (o->dl->AllDone()) Finish(o);
  }

  // A 200 to a GET of an item that wants only some ranges: never data. The
  // object changed (another ETag to If-Range), else, before any 206 came
  // for it, the server ignores Range (NotSupported: asking again gets the
  // same; sync's block reuse then takes the whole object), else a glitch,
  // retried.
  bool RefuseWhole(Req* r, const HttpResponse& response) {
    auto a =
        CheckGetAnswer(r->http.url, r->range, r->if_match, false, response);
    if (!a.ok() && a.status().IsFailedPrecondition()) {
      r->body_status = a.status();
    } else if (!r->obj->ranged) {
      r->body_status = Status::NotSupported(
          r->http.url,
          "the server ignores Range (answered 200 with the whole object)");
    } else {
      r->body_status = Status::Unavailable(
          r->http.url, "answered 200 (the whole object) to a Range");
    }
    return false;
  }

  // A 200 to a ranged GET of a known object that carries its ETag (none
  // asked, none sent: the same) and its whole size, when no 206 came for
  // it in this run (a resumed download): the server ignores Range. After a
  // 206 it is a glitch, retried.
  bool IgnoresRange(const Req* r, const HttpResponse& response) const {
    const Download& dl = *r->obj->dl;
    if (response.status != 200 || !dl.known() || r->obj->ranged) return false;
    const std::string* etag = FindHeader(response.headers, "etag");
    const std::string* cl = FindHeader(response.headers, "content-length");
    return (etag ? *etag : std::string()) == r->if_match && cl != nullptr &&
           *cl == std::to_string(dl.size());
  }

  // Writes the kept bytes not yet in the part file.
  Status WriteKept(Req* r) {
    if (r->unwritten.empty()) return Status::OK();
    Status s = r->obj->dl->Write(
        r->range.offset + r->received - r->unwritten.size(), r->unwritten);
    r->unwritten.clear();
    return s;
  }

  void OnDone(LoopRequest* lr, CURLcode rc, long status) override {
    Req* r = static_cast<Req*>(lr);
    Obj* o = r->obj;
    // A retry or a redirect of an endgame candidate stays one.
    const bool candidate = running_.erase(r) > 0;
    auto again = [&] {
      if (candidate) running_.insert(r);
    };
    // Whatever comes next (done, a retry from the first byte not kept)
    // counts on every kept byte being in the part file.
    if (Status w = WriteKept(r); !w.ok()) {
      loop_.Delete(r);
      return Fail(o, w);
    }
    Status s;
    if ((r->complete || r->cut_reached) && rc == CURLE_WRITE_ERROR)
      rc = CURLE_OK;
    if (rc == CURLE_OK && status >= 300 && status < 400 &&
        backend_->settings().follow_redirects) {
      // Sent before another request of the object was redirected: again,
      // where that one led. Else this one is followed.
      if (r->hops < o->redirect.hops) {
        again();
        return loop_.Resend(r);
      }
      auto moved =
          FollowRedirect(o->origin, r->http.url, r->ex.response, &o->redirect);
      if (!moved.ok()) {
        loop_.Delete(r);
        return Fail(o, moved.status());
      }
      if (*moved) {
        again();
        return loop_.Resend(r);
      }
    }
    if (!r->parts.empty()) return OnMultiDone(r, rc, status);
    if (rc == CURLE_OK) {
      // (A probe's 416 for an empty object was accepted at its headers.)
      bool success = r->answer || (status >= 200 && status < 300) ||
                     (r->probe && status == 416);
      if (!r->answer && status == 416 &&
          !(s = WrongSize(o, r->ex.response)).ok()) {
        // not the object the manifest names (a probe's 416 too)
      } else if (!success && status == 416) {
        // A range of the object as it was is past its end now: it shrank
        // (s3rver says so before If-Match). Start over on the new one.
        s = Status::FailedPrecondition(
            r->http.url,
            "object changed (416: the range asked is past its "
            "end)");
      } else if (!success) {
        s = backend_->ErrorFor(o->dl->item().key, r->ex.response);
      } else if (!r->answer && !Accept(r, r->ex.response)) {
        s = r->body_status;
      } else if (r->received != r->answer->length) {
        s = Status::Unavailable(
            r->http.url, "short body: " + std::to_string(r->received) + " of " +
                             std::to_string(r->answer->length) + " bytes");
      } else if (auto left = o->pieces_left.find(r->part);
                 !o->stream && left != o->pieces_left.end() &&
                 left->second > 0) {
        // A piece of a part the endgame split: the part is checked when
        // its last piece is in.
        --left->second;
        loop_.Delete(r);
        return;
      } else {
        // The parts this answer brought (every part, when one stream
        // brought them all), checked against their hashes: a bad one goes
        // back to be fetched again.
        uint64_t first = o->stream ? 0 : r->part;
        uint64_t end =
            o->stream ? o->dl->parts() : std::min(r->part + 1, o->dl->parts());
        std::vector<uint64_t> good;
        s = CheckParts(o, first, end, &good);
        if (s.ok() && o->dl->journalled()) {
          // Synced and journalled on the syncer's thread; done after that.
          for (uint64_t p : good) syncer_.Add(o, o->dl.get(), p);
          loop_.Delete(r);
          return;
        }
        for (size_t i = 0; s.ok() && i < good.size(); ++i)
          s = o->dl->PartDone(good[i]);
      }
    } else if (!r->body_status.ok()) {
      s = r->body_status;
    } else {
      s = CurlError(r->http.url, rc, r->ex.error);
    }

    if (s.ok()) {
      loop_.Delete(r);
      if (o->dl->AllDone()) Finish(o);
      return;
    }
    if (s.IsFailedPrecondition()) {
      ++report_->retries[r->range_ignored ? "range_ignored" : "changed"];
      loop_.Delete(r);
      return Restart(o, s);
    }
    if (RetryPolicy::IsRetryable(s) && loop_.CanRetry(r)) {
      std::string cause =
          r->body_status.ok() ? RetryCause(rc, status) : std::string("content");
      // Go on from the first byte not yet kept (the bytes before it are in
      // the part file already).
      // An answer that sent all it was asked and then more is not
      // trusted: its range is asked again, never an empty one.
      if (r->answer && !(r->overran && r->received == r->range.length)) {
        r->range.offset += r->received;
        r->range.length -= r->received;
        if (r->received > 0) r->whole = false;
      }
      r->answer.reset();
      again();
      return loop_.Retry(r, std::move(cause));
    }
    loop_.Delete(r);
    Fail(o, s);
  }

  // Checks parts [first, end) as they landed: good ones go to *good, a bad
  // one back to be fetched again (a ranged request from now on), up to the
  // retry limit per part; then Corruption.
  Status CheckParts(Obj* o, uint64_t first, uint64_t end,
                    std::vector<uint64_t>* good) {
    for (uint64_t p = first; p < end; ++p) {
      Status c = o->dl->CheckPart(p);
      if (c.ok()) {
        good->push_back(p);
        continue;
      }
      if (!c.IsCorruption() || ++o->part_retries[p] > opt_.max_retries)
        return c;
      ++report_->retries["part-hash"];
      o->dl->ReturnPart(p);
      o->stream = false;
    }
    return Status::OK();
  }

  // Parts the syncer made durable (or failed to).
  void Synced() {
    std::set<void*> failed;  // closed: their other parts are moot
    for (PartSyncer::Done& d : syncer_.TakeDone()) {
      Obj* o = static_cast<Obj*>(d.tag);
      if (failed.count(o)) continue;
      if (!d.status.ok()) {
        failed.insert(o);
        Fail(o, d.status);
        continue;
      }
      o->dl->MarkDone(d.part);
      if (o->dl->AllDone()) Finish(o);
    }
  }

  void Restart(Obj* o, const Status& why) {
    Forget(o);
    o->pieces_left.clear();
    loop_.Cancel(o);
    syncer_.Forget(o->dl.get());
    if (++o->restarts > 3) {
      return Fail(o, why.WithContext("the object kept changing while read"));
    }
    o->probing = false;
    o->stream = false;
    o->ranged = false;
    o->redirect = RedirectState();
    // Nothing fetched so far counts as kept: the numbers add up.
    const Download& dl = *o->dl;
    report_->bytes_resumed -= dl.resumed_bytes();
    report_->bytes_discarded += o->fetched;
    progress_.Undo(dl.known() ? dl.wanted() : 0,
                   dl.resumed_bytes() + o->fetched);
    o->fetched = 0;
    Status s = o->dl->Restart();
    if (!s.ok()) Fail(o, s);
  }

  void Fail(Obj* o, const Status& s) {
    Forget(o);
    loop_.Cancel(o);
    syncer_.Forget(o->dl.get());
    o->dl->Abandon();
    ++report_->files_failed;
    report_->failures.emplace_back(o->dl->item().key, s);
    Close(o);
  }

  void Finish(Obj* o) {
    if (o->dl->journalled()) {  // parts synced already: one fsync of little
      Status s = o->dl->Finish();
      if (!s.ok()) return Fail(o, s);
      Installed(o->dl->item(), opt_, &progress_, report_);
      return Close(o);
    }
    // Small objects: an fsync each would cost more than the transfer. They
    // wait (verified, locked, not yet renamed) for one syncfs of many, on
    // the publisher's thread.
    Status s = o->dl->Verify(/*sync=*/false);
    if (!s.ok()) return Fail(o, s);
    publisher_.Add(std::move(Take(o)->dl));
  }

  // Counts what the publisher put into place (or failed to).
  void Published() { CountPublished(&publisher_, opt_, &progress_, report_); }

  std::unique_ptr<Obj> Take(Obj* o) {
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->get() == o) {
        std::unique_ptr<Obj> owned = std::move(*it);
        open_.erase(it);
        return owned;
      }
    }
    return nullptr;
  }

  void Close(Obj* o) {
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->get() == o) {
        open_.erase(it);
        return;
      }
    }
  }

  HttpBackend* backend_;
  const DescriptorPlan fds_;  // before opener_, opt_ and publisher_
  Opener opener_;
  const TransferOptions opt_;  // the caller's, connections within fds_
  Env* env_;
  TransferReport* report_;
  CurlMultiLoop loop_;
  ProgressTicker& progress_;
  std::list<std::unique_ptr<Obj>> open_;
  // Single-range requests of parts in flight (the endgame's candidates).
  std::set<Req*> running_;
  // The run's rate (body bytes per microsecond) over the last window, and
  // its best so far.
  uint64_t rate_since_us_ = 0;
  uint64_t rate_bytes_ = 0;
  double rate_ = 0;
  double best_rate_ = 0;
  size_t best_active_ = 0;  // the most requests in flight in its window
  Publisher publisher_{env_, opt_.fsync, fds_.publish};  // after env_, opt_
  // After loop_ (its wake-ups) and open_ (its downloads): goes first.
  PartSyncer syncer_{[this] { loop_.Wakeup(); }};
};

// Appends a Read's bytes at their offsets in the part file.
class PartSink : public ByteSink {
 public:
  PartSink(Download* dl, uint64_t offset, TransferReport* report)
      : dl_(dl), offset_(offset), report_(report) {}
  Status Append(std::string_view data) override {
    FERRY_RETURN_IF_ERROR(dl_->Write(offset_, data));
    offset_ += data.size();
    report_->bytes += data.size();
    return Status::OK();
  }

 private:
  Download* dl_;
  uint64_t offset_;
  TransferReport* report_;
};

// Backends without HTTP requests (files): one object and part at a time;
// the caller finishes the download.
Status GetOne(Backend* backend, Download* dl, const TransferOptions& opt,
              BlockingBucket* bucket, TransferReport* report) {
  FERRY_RETURN_IF_ERROR(dl->Open());
  report->bytes_resumed += dl->resumed_bytes();
  uint64_t bytes_before = report->bytes;  // this object's: report->bytes - it
  CountBadResumedParts(*dl, report);
  const std::string& key = dl->item().key;
  for (int restarts = 0;; ++restarts) {
    Status s;
    if (!dl->known()) {
      ++report->requests;
      FERRY_ASSIGN_OR_RETURN(ObjectInfo info, backend->Stat(key));
      FERRY_RETURN_IF_ERROR(dl->SetKnown(info.size, info.etag, false));
    }
    while (s.ok()) {
      auto part = dl->TakePart();
      if (!part) break;
      ReadOptions ro;
      ro.if_match = dl->etag();
      for (int attempt = 0;; ++attempt) {
        ByteRange range = dl->PartRange(*part);
        PartSink part_sink(dl, range.offset, report);
        ThrottledSink sink(&part_sink, bucket);
        ++report->requests;
        s = backend->Read(key, range, ro, &sink);
        Status check = s.ok() ? dl->CheckPart(*part) : Status::OK();
        if (s.ok()) s = check.ok() ? dl->PartDone(*part) : check;
        const bool bad_part = !check.ok() && check.IsCorruption();
        if (!(bad_part || RetryPolicy::IsRetryable(s)) ||
            attempt >= opt.max_retries)
          break;
        ++report->retries[bad_part ? "part-hash" : "unavailable"];
        RetryPolicy policy;
        std::this_thread::sleep_for(
            std::chrono::milliseconds(policy.BackoffMs(attempt + 1)));
      }
    }
    if (s.ok()) return s;
    if (!s.IsFailedPrecondition() || restarts >= 3) return s;
    ++report->retries["changed"];
    report->bytes_resumed -= dl->resumed_bytes();
    report->bytes_discarded += report->bytes - bytes_before;
    bytes_before = report->bytes;
    FERRY_RETURN_IF_ERROR(dl->Restart());
  }
}

}  // namespace
}  // namespace remote

Result<TransferReport> GetObjects(Backend* backend, std::vector<GetItem> items,
                                  const TransferOptions& options, Env* env) {
  TransferReport report;
  if (options.dry_run) return report;
  if (auto* http = dynamic_cast<remote::HttpBackend*>(backend)) {
    TransferOptions scaled = options;
    scaled.connections = remote::ConnectionsForWork(items, options.connections);
    remote::GetEngine engine(http, std::move(items), scaled, env, &report);
    FERRY_RETURN_IF_ERROR(engine.Run());
    return report;
  }
  remote::ProgressTicker progress(options, &report);
  progress.SetFilesTotal(items.size());
  remote::BlockingBucket bucket(options.bwlimit, env);  // one for the run
  // Small files wait for one syncfs of many, as in the HTTP engine (an
  // fdatasync and a folder fsync each cost more than the copy).
  remote::Publisher publisher(env, options.fsync);
  for (GetItem& item : items) {
    std::string key = item.key;
    auto dl = std::make_unique<remote::Download>(
        std::move(item), options.part_size, backend->Describe() + "/" + key,
        env, options.fsync);
    Status s = remote::GetOne(backend, dl.get(), options, &bucket, &report);
    if (s.ok() && dl->journalled()) {
      s = dl->Finish();
      if (s.ok()) remote::Installed(dl->item(), options, &progress, &report);
    } else if (s.ok()) {
      s = dl->Verify(/*sync=*/false);
      if (s.ok()) publisher.Add(std::move(dl));
    }
    if (!s.ok()) {
      dl->Abandon();
      ++report.files_failed;
      report.failures.emplace_back(key, s);
    }
    remote::CountPublished(&publisher, options, &progress, &report);
    progress.Tick(false);
  }
  publisher.Close();
  remote::CountPublished(&publisher, options, &progress, &report);
  bucket.Settle();
  progress.Tick(true);
  return report;
}

}  // namespace ferry
