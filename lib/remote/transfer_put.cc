// PutObjects: the upload side of the transfer engine (docs/remote.md).
// HTTP-speaking backends: single PUTs below the part size, multipart uploads
// above it with the parts in flight together, all on one libcurl multi
// handle; a failed multipart upload is aborted. Other backends: Write.
#include <curl/curl.h>

#include <chrono>
#include <cstring>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ferry/atomic_file.h"
#include "ferry/transfer.h"
#include "remote/byte_sources.h"
#include "remote/curl_util.h"
#include "remote/file_backend.h"
#include "remote/http.h"
#include "remote/multi_loop.h"
#include "remote/retry.h"
#include "remote/token_bucket.h"
#include "remote/transfer_util.h"

namespace ferry {
namespace remote {
namespace {

// S3 allows at most 10,000 parts: larger objects get larger parts. With
// TransferOptions::grow_parts, about two parts per connection, in whole MiB,
// up to kMaxGrownPart.
constexpr uint64_t kMaxGrownPart = 64u << 20;
uint64_t PartSizeFor(uint64_t size, const TransferOptions& opt) {
  uint64_t part_size = UploadPartSize(opt.part_size);
  if (opt.grow_parts && size > part_size) {
    const uint64_t per = uint64_t(2) * uint64_t(std::max(opt.connections, 1));
    const uint64_t mib = 1u << 20;
    uint64_t grown = (size + per - 1) / per;
    grown = std::min(kMaxGrownPart, (grown + mib - 1) / mib * mib);
    part_size = std::max(part_size, grown);
  }
  uint64_t min = (size + 9999) / 10000;
  return std::max(part_size, min);
}

struct Up {
  PutItem item;
  std::unique_ptr<CheckedSource> src;
  uint64_t part_size = 0, parts = 0, next_part = 0, done_parts = 0;
  bool multipart = false;
  std::string upload_id;
  std::vector<std::string> etags;
};

struct PReq : LoopRequest {
  Up* up = nullptr;
  uint64_t part = 0;  // multipart: part number - 1
  uint64_t offset = 0, length = 0;
};

class PutEngine : public CurlMultiLoop::Client {
 public:
  PutEngine(HttpBackend* backend, std::vector<PutItem> items,
            const TransferOptions& options, Env* env, TransferReport* report)
      : backend_(backend),
        items_(std::move(items)),
        opt_(WithinDescriptors(options)),
        env_(env),
        report_(report),
        loop_(backend->settings(), opt_, {.upload_buffer_size = 256L << 10},
              report),
        progress_(loop_.progress()) {
    progress_.SetFilesTotal(items_.size());
  }

  Status Run() {
    FERRY_RETURN_IF_ERROR(loop_.Run(this));
    progress_.Tick(true);
    return Status::OK();
  }

  // CurlMultiLoop::Client
  bool StartRequest() override {
    for (auto& u : open_) {
      if (u->next_part < u->parts) {
        uint64_t p = u->next_part++;
        uint64_t off = p * u->part_size;
        NewReq(u.get(), p, off, std::min(u->part_size, u->src->size() - off));
        return true;
      }
    }
    return false;
  }

  size_t OpenCount() const override { return open_.size(); }
  bool MoreToOpen() const override { return next_item_ < items_.size(); }

  Status Prepare(LoopRequest* lr) override {
    PReq* r = static_cast<PReq*>(lr);
    Up* u = r->up;
    FERRY_ASSIGN_OR_RETURN(
        r->http, u->multipart ? backend_->MakeUploadPart(
                                    u->item.key, u->upload_id, int(r->part + 1),
                                    u->src.get(), r->offset, r->length)
                              : backend_->MakePut(u->item.key, u->src.get()));
    r->ex.on_body = [](CurlExchange& e, std::string_view data) {
      if (e.response.body.size() < (64u << 10)) e.response.body.append(data);
      return true;
    };
    return Status::OK();
  }

  void OnStartFailed(LoopRequest* lr, const Status& s) override {
    PReq* r = static_cast<PReq*>(lr);
    Up* u = r->up;
    loop_.Delete(r);
    Fail(u, s);
  }

  void OnDone(LoopRequest* lr, CURLcode rc, long status) override {
    PReq* r = static_cast<PReq*>(lr);
    Up* u = r->up;
    Status s;
    if (rc != CURLE_OK && !r->ex.source_error.ok()) {
      s = r->ex.source_error;  // the file changed: no retry helps
    } else if (rc != CURLE_OK) {
      s = CurlError(r->http.method + " " + r->http.url, rc, r->ex.error);
    } else if (status < 200 || status >= 300) {
      s = backend_->ErrorFor(u->item.key, r->ex.response);
    }
    if (s.ok()) {
      report_->bytes += r->length;
      progress_.AddDone(r->length);
      if (u->multipart) {
        const std::string* etag = FindHeader(r->ex.response.headers, "etag");
        if (etag == nullptr) {
          loop_.Delete(r);
          return Fail(
              u, Status::IOError(u->item.key, "a part's answer has no ETag"));
        }
        u->etags[r->part] = *etag;
      }
      loop_.Delete(r);
      if (++u->done_parts == u->parts) Finish(u);
      return;
    }
    if (RetryPolicy::IsRetryable(s) && loop_.CanRetry(r)) {
      return loop_.Retry(r, RetryCause(rc, status));
    }
    loop_.Delete(r);
    Fail(u, s);
  }

 private:
  void OpenNext() override {
    auto u = std::make_unique<Up>();
    u->item = std::move(items_[next_item_++]);
    Up* raw = u.get();
    open_.push_back(std::move(u));
    // Not even a multipart upload's first request (a synchronous one).
    if (loop_.GaveUp()) return Fail(raw, loop_.NotSent());
    auto src = OpenPutSource(env_, raw->item);
    if (!src.ok()) return Fail(raw, src.status());
    raw->src = std::move(*src);
    uint64_t size = raw->src->size();
    progress_.AddTotal(size, 0);
    if (size > UploadPartSize(opt_.part_size)) {
      ++report_->requests;
      auto id =
          backend_->StartMultipart(raw->item.key, opt_.keep_uploads_younger_s);
      if (id.ok()) {
        raw->multipart = true;
        raw->upload_id = *id;
        raw->part_size = PartSizeFor(size, opt_);
        raw->parts = (size + raw->part_size - 1) / raw->part_size;
        raw->etags.assign(raw->parts, std::string());
        return;
      }
      if (id.status().code() != Status::Code::kNotSupported)
        return Fail(raw, id.status());
    }
    raw->part_size = std::max<uint64_t>(size, 1);
    raw->parts = 1;
  }

  void NewReq(Up* u, uint64_t part, uint64_t off, uint64_t len) {
    PReq* r = loop_.Add(std::make_unique<PReq>());
    r->owner = u;
    r->up = u;
    r->part = part;
    r->offset = off;
    r->length = len;
    loop_.Start(r);
  }

  void Finish(Up* u) {
    if (Status s = u->src->CheckUnchanged(); !s.ok()) return Fail(u, s);
    if (u->multipart) {
      ++report_->requests;
      auto done =
          backend_->CompleteMultipart(u->item.key, u->upload_id, u->etags);
      if (!done.ok()) return Fail(u, done.status());
    }
    ++report_->files_done;
    progress_.FileDone();
    Close(u);
  }

  void Fail(Up* u, const Status& s) {
    loop_.Cancel(u);
    if (u->multipart) {
      // Nothing of a failed upload may stay behind (it costs storage).
      ++report_->requests;
      (void)backend_->AbortMultipart(u->item.key, u->upload_id);
    }
    ++report_->files_failed;
    report_->failures.emplace_back(u->item.src, s);
    Close(u);
  }

  void Close(Up* u) {
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->get() == u) {
        open_.erase(it);
        return;
      }
    }
  }

  HttpBackend* backend_;
  std::vector<PutItem> items_;
  const TransferOptions opt_;  // the caller's, connections within the limit
  Env* env_;
  TransferReport* report_;
  CurlMultiLoop loop_;
  ProgressTicker& progress_;
  size_t next_item_ = 0;
  std::list<std::unique_ptr<Up>> open_;
};

}  // namespace
}  // namespace remote

Result<TransferReport> PutObjects(Backend* backend, std::vector<PutItem> items,
                                  const TransferOptions& options, Env* env) {
  TransferReport report;
  if (options.dry_run) return report;
  if (auto* http = dynamic_cast<remote::HttpBackend*>(backend)) {
    remote::PutEngine engine(http, std::move(items), options, env, &report);
    FERRY_RETURN_IF_ERROR(engine.Run());
    return report;
  }
  remote::ProgressTicker progress(options, &report);
  progress.SetFilesTotal(items.size());
  remote::RetryPolicy policy;
  policy.max_retries = options.max_retries;
  remote::BlockingBucket bucket(options.bwlimit, env);  // one for the run
  // A file backend's objects are published in batches: one syncfs for many
  // files (an fsync of each file and its folder cost more than the copy),
  // then the renames; none has its name before its bytes are durable.
  auto* unpublished = dynamic_cast<remote::UnpublishedWriter*>(backend);
  std::optional<AtomicBatch> batch;
  if (unpublished) batch.emplace(env, unpublished->root());
  std::vector<const PutItem*> batched;
  uint64_t batched_bytes = 0;
  // Each file waiting in the batch holds its temporary's lock, a
  // descriptor: as many as the get side's publisher holds.
  const size_t max_batch =
      std::min<size_t>(4096, remote::PlanDescriptors(1).publish);
  auto commit = [&] {
    batch->Commit([&](size_t i, const Status& s) {
      if (s.ok()) {
        ++report.files_done;
        progress.FileDone();
      } else {
        ++report.files_failed;
        report.failures.emplace_back(batched[i]->src, s);
      }
    });
    batched.clear();
    batched_bytes = 0;
  };
  for (const PutItem& item : items) {
    Status s;
    auto src = remote::OpenPutSource(env, item);
    bool added = false;
    for (int attempt = 0; src.ok(); ++attempt) {
      ++report.requests;
      remote::ThrottledSource throttled(src->get(), &bucket);
      if (unpublished) {
        auto w = unpublished->WriteUnpublished(item.key, &throttled);
        s = w.status();
        if (s.ok()) s = (*src)->CheckUnchanged();
        if (s.ok()) s = (*w)->Detach();
        if (s.ok()) {
          batch->Add(std::move(*w));  // with its lock (a descriptor)
          added = true;
        }
      } else {
        s = backend->Write(item.key, &throttled, WriteOptions{}).status();
        if (s.ok()) s = (*src)->CheckUnchanged();
      }
      if (s.ok()) report.bytes += (*src)->size();
      if (!remote::RetryPolicy::IsRetryable(s) || attempt >= policy.max_retries)
        break;
      ++report.retries["unavailable"];
      std::this_thread::sleep_for(
          std::chrono::milliseconds(policy.BackoffMs(attempt + 1)));
    }
    if (!src.ok()) s = src.status();
    if (added) {
      batched.push_back(&item);
      batched_bytes += (*src)->size();
      if (batched.size() >= max_batch || batched_bytes >= (1u << 30)) commit();
    } else if (s.ok()) {
      ++report.files_done;
      progress.FileDone();
    } else {
      ++report.files_failed;
      report.failures.emplace_back(item.src, s);
    }
    progress.Tick(false);
  }
  if (batch) commit();
  bucket.Settle();
  progress.Tick(true);
  return report;
}

}  // namespace ferry
