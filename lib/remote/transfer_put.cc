// PutObjects: the upload side of the transfer engine (docs/remote.md).
// HTTP-speaking backends: single PUTs below the part size, multipart uploads
// above it with the parts in flight together, all on one libcurl multi
// handle; a failed multipart upload is aborted. Other backends: Write.
#include <curl/curl.h>

#include <chrono>
#include <cstring>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ferry/transfer.h"
#include "remote/curl_util.h"
#include "remote/http.h"
#include "remote/retry.h"
#include "remote/transfer_util.h"

namespace ferry {
namespace remote {
namespace {

// A local file as the body of requests, read at any offset.
class FileSource : public ByteSource {
 public:
  static Result<std::unique_ptr<FileSource>> Open(Env* env,
                                                  const std::string& path) {
    FERRY_ASSIGN_OR_RETURN(auto f, env->NewRandomAccessFile(path));
    FERRY_ASSIGN_OR_RETURN(uint64_t size, f->Size());
    auto s = std::make_unique<FileSource>();
    s->file_ = std::move(f);
    s->size_ = size;
    return s;
  }
  uint64_t size() const override { return size_; }
  Status ReadAt(uint64_t offset, size_t n, char* scratch,
                size_t* got) override {
    std::string_view v;
    FERRY_RETURN_IF_ERROR(file_->Read(offset, n, &v, scratch));
    if (v.data() != scratch) std::memcpy(scratch, v.data(), v.size());
    *got = v.size();
    return Status::OK();
  }

 private:
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t size_ = 0;
};

// S3 allows at most 10,000 parts: larger objects get larger parts.
uint64_t PartSizeFor(uint64_t size, uint64_t part_size) {
  part_size = std::max<uint64_t>(part_size, 1);
  uint64_t min = (size + 9999) / 10000;
  return std::max(part_size, min);
}

struct Up {
  PutItem item;
  std::unique_ptr<FileSource> src;
  uint64_t part_size = 0, parts = 0, next_part = 0, done_parts = 0;
  bool multipart = false;
  std::string upload_id;
  std::vector<std::string> etags;
  int requests = 0;
};

struct PReq {
  Up* up = nullptr;
  uint64_t part = 0;  // multipart: part number - 1
  uint64_t offset = 0, length = 0;
  int attempt = 0;
  uint64_t not_before_us = 0;
  HttpRequest http;
  CurlExchange ex;
  CURL* easy = nullptr;
};

class PutEngine {
 public:
  PutEngine(HttpBackend* backend, std::vector<PutItem> items,
            const TransferOptions& options, Env* env, TransferReport* report)
      : backend_(backend),
        items_(std::move(items)),
        opt_(options),
        env_(env),
        report_(report),
        settings_(backend->settings()),
        progress_(options, report) {
    settings_.low_speed_limit = options.low_speed_limit;
    settings_.low_speed_time = options.low_speed_time;
    policy_.max_retries = options.max_retries;
    connections_ = size_t(std::max(1, options.connections));
    progress_.SetFilesTotal(items_.size());
  }

  ~PutEngine() {
    for (auto& [r, owned] : reqs_) {
      if (r->easy) {
        curl_multi_remove_handle(multi_, r->easy);
        curl_easy_cleanup(r->easy);
      }
    }
    for (CURL* e : pool_) curl_easy_cleanup(e);
    if (multi_) curl_multi_cleanup(multi_);
  }

  Status Run() {
    EnsureCurlGlobalInit();
    multi_ = curl_multi_init();
    if (multi_ == nullptr) return Status::IOError("curl_multi_init failed");
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, long(connections_ * 2));
    for (;;) {
      Schedule();
      if (active_ == 0 && waiting_.empty() && open_.empty() &&
          next_item_ >= items_.size())
        break;
      int running = 0;
      CURLMcode mc = curl_multi_perform(multi_, &running);
      if (mc != CURLM_OK)
        return Status::IOError("curl_multi_perform", curl_multi_strerror(mc));
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        PReq* r = nullptr;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &r);
        OnDone(r, m->data.result);
      }
      progress_.Tick(false);
      if (active_ > 0 || !waiting_.empty()) {
        uint64_t now = NowMicros(), wait = 100000;
        for (PReq* r : waiting_)
          wait = std::min(wait,
                          r->not_before_us > now ? r->not_before_us - now : 0);
        curl_multi_poll(multi_, nullptr, 0, int((wait + 999) / 1000), nullptr);
      }
    }
    progress_.Tick(true);
    return Status::OK();
  }

 private:
  void Schedule() {
    uint64_t now = NowMicros();
    for (size_t i = 0; i < waiting_.size() && active_ < connections_;) {
      PReq* r = waiting_[i];
      if (r->not_before_us <= now) {
        waiting_.erase(waiting_.begin() + i);
        Start(r);
      } else {
        ++i;
      }
    }
    while (active_ < connections_) {
      bool started = false;
      for (auto& u : open_) {
        if (u->next_part < u->parts) {
          uint64_t p = u->next_part++;
          uint64_t off = p * u->part_size;
          NewReq(u.get(), p, off, std::min(u->part_size, u->src->size() - off));
          started = true;
          break;
        }
      }
      if (started) continue;
      if (open_.size() >= 2 * connections_ + 2 || next_item_ >= items_.size())
        break;
      OpenNext();
    }
  }

  void OpenNext() {
    auto u = std::make_unique<Up>();
    u->item = std::move(items_[next_item_++]);
    Up* raw = u.get();
    open_.push_back(std::move(u));
    auto src = FileSource::Open(env_, raw->item.src);
    if (!src.ok()) return Fail(raw, src.status());
    raw->src = std::move(*src);
    uint64_t size = raw->src->size();
    progress_.AddTotal(size, 0);
    if (size > opt_.part_size) {
      ++report_->requests;
      auto id = backend_->StartMultipart(raw->item.key);
      if (id.ok()) {
        raw->multipart = true;
        raw->upload_id = *id;
        raw->part_size = PartSizeFor(size, opt_.part_size);
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
    auto r = std::make_unique<PReq>();
    r->up = u;
    r->part = part;
    r->offset = off;
    r->length = len;
    PReq* raw = r.get();
    reqs_[raw] = std::move(r);
    ++u->requests;
    Start(raw);
  }

  void DeleteReq(PReq* r) {
    if (r->easy) {
      curl_multi_remove_handle(multi_, r->easy);
      pool_.push_back(r->easy);
      r->easy = nullptr;
      --active_;
    }
    --r->up->requests;
    reqs_.erase(r);
  }

  void Start(PReq* r) {
    Up* u = r->up;
    Result<HttpRequest> req =
        u->multipart ? backend_->MakeUploadPart(u->item.key, u->upload_id,
                                                int(r->part + 1), u->src.get(),
                                                r->offset, r->length)
                     : backend_->MakePut(u->item.key, u->src.get());
    if (!req.ok()) {
      DeleteReq(r);
      return Fail(u, req.status());
    }
    r->http = std::move(*req);
    r->ex = CurlExchange();
    r->ex.request = &r->http;
    r->ex.on_body = [](CurlExchange& e, std::string_view data) {
      if (e.response.body.size() < (64u << 10)) e.response.body.append(data);
      return true;
    };
    CURL* easy;
    if (!pool_.empty()) {
      easy = pool_.back();
      pool_.pop_back();
      curl_easy_reset(easy);
    } else {
      easy = curl_easy_init();
    }
    Status s = SetupEasy(easy, &r->ex, settings_);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, r);
    curl_easy_setopt(easy, CURLOPT_UPLOAD_BUFFERSIZE, 256L << 10);
    r->easy = easy;
    ++active_;
    ++report_->requests;
    if (!s.ok() || curl_multi_add_handle(multi_, easy) != CURLM_OK) {
      DeleteReq(r);
      return Fail(u, s.ok() ? Status::IOError("curl_multi_add_handle") : s);
    }
  }

  void OnDone(PReq* r, CURLcode rc) {
    Up* u = r->up;
    long status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    r->ex.response.status = status;
    LogRequest(settings_, r->http, status);
    curl_multi_remove_handle(multi_, r->easy);
    pool_.push_back(r->easy);
    r->easy = nullptr;
    --active_;
    Status s;
    if (rc != CURLE_OK) {
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
          DeleteReq(r);
          return Fail(
              u, Status::IOError(u->item.key, "a part's answer has no ETag"));
        }
        u->etags[r->part] = *etag;
      }
      DeleteReq(r);
      if (++u->done_parts == u->parts) Finish(u);
      return;
    }
    if (RetryPolicy::IsRetryable(s) && r->attempt < policy_.max_retries) {
      ++r->attempt;
      ++report_->retries[RetryCause(rc, status)];
      r->not_before_us =
          NowMicros() + uint64_t(policy_.BackoffMs(
                            r->attempt, RetryAfterSeconds(r->ex.response))) *
                            1000;
      waiting_.push_back(r);
      return;
    }
    DeleteReq(r);
    Fail(u, s);
  }

  void Finish(Up* u) {
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
    for (size_t i = 0; i < waiting_.size();) {
      if (waiting_[i]->up == u) {
        PReq* r = waiting_[i];
        waiting_.erase(waiting_.begin() + i);
        DeleteReq(r);
      } else {
        ++i;
      }
    }
    std::vector<PReq*> mine;
    for (auto& [r, owned] : reqs_)
      if (r->up == u) mine.push_back(r);
    for (PReq* r : mine) DeleteReq(r);
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
  const TransferOptions& opt_;
  Env* env_;
  TransferReport* report_;
  HttpSettings settings_;
  RetryPolicy policy_;
  ProgressTicker progress_;
  size_t connections_ = 16;
  CURLM* multi_ = nullptr;
  size_t next_item_ = 0, active_ = 0;
  std::list<std::unique_ptr<Up>> open_;
  std::unordered_map<PReq*, std::unique_ptr<PReq>> reqs_;
  std::vector<PReq*> waiting_;
  std::vector<CURL*> pool_;
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
  for (const PutItem& item : items) {
    Status s;
    auto src = remote::FileSource::Open(env, item.src);
    for (int attempt = 0; src.ok(); ++attempt) {
      ++report.requests;
      auto w = backend->Write(item.key, src->get(), WriteOptions{});
      s = w.status();
      if (s.ok()) report.bytes += (*src)->size();
      if (!remote::RetryPolicy::IsRetryable(s) || attempt >= policy.max_retries)
        break;
      ++report.retries["unavailable"];
      std::this_thread::sleep_for(
          std::chrono::milliseconds(policy.BackoffMs(attempt + 1)));
    }
    if (!src.ok()) s = src.status();
    if (s.ok()) {
      ++report.files_done;
      progress.FileDone();
    } else {
      ++report.files_failed;
      report.failures.emplace_back(item.src, s);
    }
    progress.Tick(false);
  }
  progress.Tick(true);
  return report;
}

}  // namespace ferry
