#include "agents/transcript_writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <mutex>
#include <thread>

#include "agents/api_keys.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/sha256.h"
#include "common/time.h"
#include "contract/transcript_chain.h"

extern char** environ;

namespace kd::agents {

struct TranscriptWriter::Queue {
  struct Blob {
    std::filesystem::path path;
    std::string bytes;
  };
  ~Queue() {
    if (fd >= 0) ::close(fd);
  }

  int fd = -1;
  std::string path;
  std::mutex mu;
  std::condition_variable cv;
  // Guarded by mu. Blobs are written before the lines queued with or after them.
  std::vector<Blob> blobs;
  std::string lines;
  std::uint64_t queued = 0;   // records handed over
  std::uint64_t durable = 0;  // records written and synced
  bool scheduled = false;     // in the disk threads' hands (never two threads on one file)
  std::string error;          // the first failure; nothing is written after it
};

namespace {

using Queue = TranscriptWriter::Queue;

// Short values (flags like "1") are not worth redacting and would shred unrelated text.
constexpr size_t kMinSecretLength = 8;
// Syncs of different transcripts overlap; one file's records stay with one thread at a time.
constexpr int kDiskThreads = 2;
constexpr int kDiskNice = 10;

void replace_all(std::string& s, const std::string& what) {
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 10)) {
    s.replace(pos, what.size(), "[REDACTED]");
  }
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  for (size_t off = 0; off < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_sys("write", quote(path), errno);
    }
    off += static_cast<size_t>(n);
  }
}

// The process's disk threads, shared by every transcript so that a thousand sessions do not
// mean a thousand threads.
class DiskThreads {
 public:
  DiskThreads() {
    for (int i = 0; i < kDiskThreads; ++i)
      threads_.emplace_back([this] {
        // Durability is background work: the kernel time of writes and syncs must not take
        // the CPU from the thread that streams the models' responses. On Linux nice() changes
        // the calling thread only, relative to the process. Best effort: a failure leaves the
        // records as durable, only the streams may wait.
        [[maybe_unused]] const int niceness = ::nice(kDiskNice);
        run();
      });
  }
  ~DiskThreads() {
    {
      std::lock_guard l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      t.join();
  }

  void schedule(std::shared_ptr<Queue> q) {
    {
      std::lock_guard l(mu_);
      ready_.push_back(std::move(q));
    }
    cv_.notify_one();
  }

 private:
  void run() {
    for (;;) {
      std::shared_ptr<Queue> q;
      {
        std::unique_lock l(mu_);
        cv_.wait(l, [this] { return stop_ || !ready_.empty(); });
        if (ready_.empty()) return;  // stopping, nothing left
        q = std::move(ready_.front());
        ready_.pop_front();
      }
      if (drain(*q)) schedule(std::move(q));
    }
  }

  // Writes and syncs what the queue holds; true when more arrived meanwhile.
  static bool drain(Queue& q) {
    std::vector<Queue::Blob> blobs;
    std::string lines;
    std::uint64_t upto = 0;
    {
      std::lock_guard l(q.mu);
      blobs.swap(q.blobs);
      lines.swap(q.lines);
      upto = q.queued;
    }
    std::string error;
    try {
      for (const auto& b : blobs) {
        if (std::filesystem::exists(b.path)) continue;  // same digest, same bytes
        std::filesystem::create_directories(b.path.parent_path());
        write_file_atomic(b.path, b.bytes);
      }
      write_all(q.fd, lines, q.path);
      if (::fdatasync(q.fd) != 0) throw_sys("fdatasync", quote(q.path), errno);
    } catch (const std::exception& e) {
      error = e.what();
    }
    bool again = false;
    {
      std::lock_guard l(q.mu);
      if (error.empty()) {
        q.durable = upto;
        again = !q.lines.empty() || !q.blobs.empty();
      } else {
        q.error = std::move(error);
      }
      q.scheduled = again;
    }
    q.cv.notify_all();
    return again;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Queue>> ready_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

DiskThreads& disk_threads() {
  static DiskThreads threads;
  return threads;
}

}  // namespace

TranscriptWriter::TranscriptWriter(std::filesystem::path dir, std::string session, std::string role,
                                   std::vector<std::string> secrets)
    : dir_(std::move(dir)),
      session_(std::move(session)),
      role_(std::move(role)),
      secrets_(std::move(secrets)),
      head_(contract::kZeroHash) {
  collect_secrets();
  open(O_CREAT | O_EXCL);
}

TranscriptWriter::TranscriptWriter(std::filesystem::path dir, std::string session, std::string role,
                                   const ChainTail& tail, std::vector<std::string> secrets)
    : dir_(std::move(dir)),
      session_(std::move(session)),
      role_(std::move(role)),
      secrets_(std::move(secrets)),
      seq_(tail.records),
      head_(tail.records == 0 ? std::string(contract::kZeroHash) : tail.head) {
  collect_secrets();
  open(O_CREAT);
  const std::string& p = queue_->path;
  struct stat st {};
  if (::fstat(queue_->fd, &st) != 0) throw_sys("fstat", quote(p), errno);
  if (static_cast<std::uint64_t>(st.st_size) != tail.bytes + tail.torn_bytes) {
    throw Error(quote(p) + " is " + std::to_string(st.st_size) + " bytes, not the " +
                std::to_string(tail.bytes + tail.torn_bytes) +
                " it was read at: something wrote to it since");
  }
  if (tail.torn_bytes > 0) {
    if (::ftruncate(queue_->fd, static_cast<off_t>(tail.bytes)) != 0) {
      throw_sys("ftruncate", quote(p) + " to " + std::to_string(tail.bytes) + " bytes", errno);
    }
    if (::fdatasync(queue_->fd) != 0) throw_sys("fdatasync", quote(p), errno);
  }
}

void TranscriptWriter::collect_secrets() {
  for (auto& k : known_secrets())
    secrets_.push_back(k);
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    if (is_secret_env_name(std::string(kv.substr(0, eq)))) secrets_.emplace_back(kv.substr(eq + 1));
  }
  std::erase_if(secrets_, [](const std::string& s) { return s.size() < kMinSecretLength; });
  // Longest first, so a secret containing another is replaced whole.
  std::sort(secrets_.begin(), secrets_.end(),
            [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

void TranscriptWriter::open(int flags) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw Error("create_directories(" + quote(dir_.string()) + "): " + ec.message());
  queue_ = std::make_shared<Queue>();
  queue_->path = path().string();
  const std::string& p = queue_->path;
  queue_->fd = ::open(p.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | flags, 0644);
  if (queue_->fd < 0) {
    throw_sys("open", quote(p) + ((flags & O_EXCL) ? ", O_CREAT|O_EXCL|O_APPEND" : ", O_APPEND"),
              errno);
  }
  // One writer per transcript: a resume while the session still runs elsewhere is refused
  // rather than interleaving two chains.
  if (::flock(queue_->fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) {
      throw Error(quote(p) + " is being written by another process (flock LOCK_EX: EWOULDBLOCK)");
    }
    throw_sys("flock", quote(p) + ", LOCK_EX", err);
  }
}

TranscriptWriter::~TranscriptWriter() {
  std::unique_lock l(queue_->mu);
  // Once no disk thread holds the queue, the file (and its lock) closes here, not whenever a
  // disk thread drops its reference: a resume right after this writer must get the lock.
  queue_->cv.wait(l, [&] {
    return !queue_->scheduled && (queue_->durable == queue_->queued || !queue_->error.empty());
  });
  if (queue_->fd >= 0) ::close(queue_->fd);
  queue_->fd = -1;
}

void TranscriptWriter::flush() {
  std::unique_lock l(queue_->mu);
  queue_->cv.wait(l, [&] { return queue_->durable == queue_->queued || !queue_->error.empty(); });
  if (!queue_->error.empty()) throw Error(queue_->error);
}

void TranscriptWriter::redact(nlohmann::json& j) const {
  if (j.is_string()) {
    std::string& s = j.get_ref<std::string&>();
    for (const auto& secret : secrets_)
      replace_all(s, secret);
  } else if (j.is_array() || j.is_object()) {
    for (auto& v : j)
      redact(v);
  }
}

void TranscriptWriter::store_large(nlohmann::json& data, const char* field) {
  if (!data.is_object() || !data.contains(field)) return;
  nlohmann::json& v = data[field];
  std::string bytes = v.is_string() ? v.get<std::string>() : v.dump();
  if (bytes.size() <= kBlobThreshold) return;
  std::string digest = sha256_hex(bytes);
  data.erase(field);
  data[std::string(field) + "_ref"] = digest;
  data[std::string(field) + "_bytes"] = bytes.size();
  if (!blobs_.insert(digest).second) return;  // queued before: retried request bodies
  std::lock_guard l(queue_->mu);
  queue_->blobs.push_back({dir_ / "blobs" / digest, std::move(bytes)});
}

std::string TranscriptWriter::append(const std::string& type, nlohmann::json data) {
  {
    std::lock_guard l(queue_->mu);
    if (!queue_->error.empty()) {
      throw Error("transcript " + quote(queue_->path) + " stopped: " + queue_->error);
    }
  }
  redact(data);
  store_large(data, "content");
  store_large(data, "body");
  store_large(data, "append");
  // Tool output may hold invalid UTF-8; it is replaced (U+FFFD) rather than failing the record.
  contract::ChainRecord r{seq_,
                          head_,
                          utc_now_rfc3339(),
                          session_,
                          role_,
                          type,
                          data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  std::string hash;
  std::string line = contract::seal_chain_line(r, &hash);
  line += '\n';
  bool schedule = false;
  {
    std::lock_guard l(queue_->mu);
    queue_->lines += line;
    ++queue_->queued;
    schedule = !queue_->scheduled;
    queue_->scheduled = true;
  }
  if (schedule) disk_threads().schedule(queue_);
  ++seq_;
  head_ = hash;
  return hash;
}

}  // namespace kd::agents
