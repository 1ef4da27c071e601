#include "agents/http_client.h"

#include <curl/curl.h>
#include <sys/epoll.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <deque>
#include <mutex>

#include "common/errors.h"
#include "common/text.h"

namespace kd::agents {

namespace asio = boost::asio;

namespace {

constexpr size_t kMaxBody = 64u << 20;  // a whole response beyond this is not a provider reply
// New transfers handed to curl per turn of the loop, after the streams already running have
// been served (see HttpClient::Impl::admit).
constexpr size_t kAdmitBatch = 8;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("curl_global_init: failed");
  });
}

}  // namespace

// One request in flight: its curl handle, its deadlines and the response so far.
struct HttpClient::Transfer {
  Transfer(asio::any_io_executor ex)
      : done(ex, asio::steady_timer::time_point::max()), deadline(ex) {}
  ~Transfer() {
    if (easy) curl_easy_cleanup(easy);
    if (header_list) curl_slist_free_all(header_list);
  }
  Impl* owner = nullptr;
  std::weak_ptr<Transfer> self;
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  HttpRequest req;
  DataSink sink;
  HttpResponse resp;
  asio::steady_timer done;      // cancelled when the transfer completes
  asio::steady_timer deadline;  // first byte, then idle
  const char* deadline_kind = "timeout_first_byte";
  std::chrono::milliseconds phase{0};
  std::chrono::steady_clock::time_point expires_at;
  bool finished = false;
  bool got_byte = false;
  bool too_large = false;
  char errbuf[CURL_ERROR_SIZE] = {};
};

// Curl's sockets live in a private epoll set, level-triggered, changed only when curl changes
// what it waits for; the io_context waits on that set's descriptor. One wake-up then serves
// every ready socket with one epoll_wait, instead of one reactor registration, one epoll_ctl
// and one completion handler per socket per event.
struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  explicit Impl(asio::any_io_executor e) : ex(e), timer(e), poller(e) {
    int fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) throw_sys("epoll_create1", "EPOLL_CLOEXEC", errno);
    poller.assign(fd);
  }
  ~Impl() {
    // Before the epoll set closes: cleanup reports each socket's removal through on_socket.
    if (multi) curl_multi_cleanup(multi);
  }

  asio::any_io_executor ex;
  CURLM* multi = nullptr;
  asio::steady_timer timer;
  // curl's timer: when curl wants its timeout action; max when it wants none. The pending
  // wait may expire earlier and then re-arms itself, so a later deadline costs no cancel.
  asio::steady_timer::time_point timer_due = asio::steady_timer::time_point::max();
  bool timer_waiting = false;
  asio::posix::stream_descriptor poller;  // the epoll set of curl's sockets
  bool polling = false;                   // a wait on the set is pending
  unsigned poll_gen = 0;                  // bumped when that wait is cancelled
  size_t watched = 0;                     // sockets in the set
  std::map<CURL*, std::shared_ptr<Transfer>> transfers;
  std::deque<std::shared_ptr<Transfer>> waiting;  // not yet handed to curl
  bool admit_posted = false;

  static int on_socket(CURL*, curl_socket_t fd, int what, void* userp, void* socketp) {
    auto* self = static_cast<Impl*>(userp);
    int epfd = self->poller.native_handle();
    if (what == CURL_POLL_REMOVE) {
      // curl removes a socket before closing it; a socket already closed left the set itself.
      ::epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nullptr);
      if (socketp && --self->watched == 0) self->stop_waiting();
      return 0;
    }
    epoll_event ev{};
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    ev.data.fd = fd;
    // socketp is what curl_multi_assign stored: non-null once the socket is in the set.
    if (::epoll_ctl(epfd, socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) != 0) {
      return -1;  // curl fails the transfers on this socket
    }
    if (!socketp) {
      curl_multi_assign(self->multi, fd, self);
      ++self->watched;
    }
    self->wait_ready();
    return 0;
  }

  // Waits on the set only while it holds sockets, so an idle client leaves the io_context
  // free to return. A wait cancelled or superseded (older generation) does nothing.
  void wait_ready() {
    if (polling || watched == 0) return;
    polling = true;
    poller.async_wait(asio::posix::stream_descriptor::wait_read,
                      [self = shared_from_this(), gen = poll_gen](boost::system::error_code ec) {
                        if (ec || gen != self->poll_gen) return;
                        self->polling = false;
                        self->drain();
                        self->wait_ready();
                      });
  }

  void stop_waiting() {
    if (!polling) return;
    polling = false;
    ++poll_gen;
    boost::system::error_code ec;
    poller.cancel(ec);
  }

  // Hands every ready socket to curl. Level-triggered: a socket curl did not read dry is
  // reported again by the next wait, and more ready sockets than one batch holds too.
  void drain() {
    epoll_event evs[256];
    int n = ::epoll_wait(poller.native_handle(), evs, 256, 0);
    for (int i = 0; i < n; ++i) {
      uint32_t e = evs[i].events;
      int bits = ((e & (EPOLLIN | EPOLLHUP)) ? CURL_CSELECT_IN : 0) |
                 ((e & EPOLLOUT) ? CURL_CSELECT_OUT : 0) | ((e & EPOLLERR) ? CURL_CSELECT_ERR : 0);
      int running = 0;
      curl_multi_socket_action(multi, evs[i].data.fd, bits, &running);
    }
    if (n > 0) reap();
  }

  // Setting up a transfer (handle, connection, request) costs far more than one event of a
  // running stream, so a burst of new sessions would hold up the streams already running.
  // New transfers wait here and are handed to curl a batch at a time, each batch after the
  // ready sockets have been served; a burst then delays its own first bytes, not other
  // sessions' events.
  void enqueue(std::shared_ptr<Transfer> t) {
    waiting.push_back(std::move(t));
    post_admit();
  }

  void post_admit() {
    if (admit_posted) return;
    admit_posted = true;
    asio::post(ex, [self = shared_from_this()] { self->admit(); });
  }

  void admit() {
    admit_posted = false;
    if (waiting.empty()) return;  // the client shut down
    if (watched > 0) drain();
    for (size_t n = 0; n < kAdmitBatch && !waiting.empty();) {
      std::shared_ptr<Transfer> t = std::move(waiting.front());
      waiting.pop_front();
      if (t->finished) continue;  // its deadline passed while it waited
      ++n;
      if (CURLMcode mc = curl_multi_add_handle(multi, t->easy); mc != CURLM_OK) {
        t->resp.error_kind = "transport";
        t->resp.error = "curl_multi_add_handle(" + t->req.url + "): " + curl_multi_strerror(mc);
        finish(t);
      }
    }
    if (!waiting.empty()) post_admit();
  }

  static int on_timer(CURLM*, long timeout_ms, void* userp) {
    auto* self = static_cast<Impl*>(userp);
    if (timeout_ms < 0) {
      // Nothing due: cancelled rather than left to expire, so an idle client holds no wait.
      self->timer_due = asio::steady_timer::time_point::max();
      if (self->timer_waiting) {
        self->timer_waiting = false;
        self->timer.cancel();
      }
      return 0;
    }
    self->timer_due = asio::steady_timer::clock_type::now() + std::chrono::milliseconds(timeout_ms);
    if (self->timer_waiting && self->timer.expiry() <= self->timer_due) return 0;
    // Never call back into curl from inside its own callback: a zero timeout is a posted wait.
    self->arm_timer();
    return 0;
  }

  void arm_timer() {
    timer_waiting = true;
    timer.expires_at(timer_due);  // cancels an earlier wait, whose handler then does nothing
    timer.async_wait([w = weak_from_this()](boost::system::error_code ec) {
      auto me = w.lock();
      if (!me || ec) return;
      me->timer_waiting = false;
      if (me->timer_due == asio::steady_timer::time_point::max()) return;
      if (asio::steady_timer::clock_type::now() < me->timer_due) {
        me->arm_timer();
        return;
      }
      me->timer_due = asio::steady_timer::time_point::max();
      int running = 0;
      curl_multi_socket_action(me->multi, CURL_SOCKET_TIMEOUT, 0, &running);
      me->reap();
    });
  }

  void reap() {
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      auto it = transfers.find(m->easy_handle);
      if (it == transfers.end()) continue;
      std::shared_ptr<Transfer> t = it->second;
      CURLcode rc = m->data.result;
      if (rc != CURLE_OK && t->resp.error_kind.empty()) {
        if (t->too_large) {
          t->resp.error_kind = "transport";
          t->resp.error = "response body over " + std::to_string(kMaxBody) + " bytes";
        } else {
          t->resp.error_kind = (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                                rc == CURLE_COULDNT_RESOLVE_PROXY ||
                                (rc == CURLE_OPERATION_TIMEDOUT && !t->got_byte))
                                   ? "connect"
                                   : "transport";
          t->resp.error = std::string(curl_easy_strerror(rc)) +
                          (t->errbuf[0] ? std::string(": ") + t->errbuf : "");
        }
      }
      finish(t);
    }
  }

  void finish(const std::shared_ptr<Transfer>& t) {
    if (t->finished) return;
    t->finished = true;
    curl_multi_remove_handle(multi, t->easy);
    transfers.erase(t->easy);
    t->deadline.cancel();
    t->done.cancel();
  }

  // Deadlines: a phase (first byte, then idle) sets the timer once; progress only moves
  // `expires_at`, and an expiring timer re-arms itself while progress has moved it. One clock
  // read per event instead of a timer cancel and re-wait.
  void start_phase(const std::shared_ptr<Transfer>& t, std::chrono::milliseconds d,
                   const char* kind) {
    t->deadline_kind = kind;
    t->phase = d;
    t->expires_at = std::chrono::steady_clock::now() + d;
    arm_deadline(t);
  }

  static void touch(Transfer* t) { t->expires_at = std::chrono::steady_clock::now() + t->phase; }

  void arm_deadline(const std::shared_ptr<Transfer>& t) {
    t->deadline.expires_at(t->expires_at);
    t->deadline.async_wait([self = shared_from_this(), w = std::weak_ptr<Transfer>(t)](auto ec) {
      auto tr = w.lock();
      if (!tr || ec || tr->finished) return;
      if (std::chrono::steady_clock::now() < tr->expires_at) {
        self->arm_deadline(tr);
        return;
      }
      tr->resp.error_kind = tr->deadline_kind;
      tr->resp.error = std::string(tr->deadline_kind == std::string_view("timeout_idle")
                                       ? "no progress for "
                                       : "no response byte within ") +
                       std::to_string(tr->phase.count()) + " ms";
      self->finish(tr);
    });
  }

  static size_t on_header(char* data, size_t size, size_t n, void* userp) {
    auto* t = static_cast<Transfer*>(userp);
    std::string_view line(data, size * n);
    if (line.rfind("HTTP/", 0) == 0) {
      t->resp.headers.clear();  // a new response (after 100 Continue or a redirect)
    } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
      t->resp.headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
    }
    if (!t->got_byte) {
      t->got_byte = true;
      if (auto sp = t->self.lock()) t->owner->start_phase(sp, t->req.idle_timeout, "timeout_idle");
    }
    return size * n;
  }

  static size_t on_write(char* data, size_t size, size_t n, void* userp) {
    auto* t = static_cast<Transfer*>(userp);
    std::string_view bytes(data, size * n);
    if (t->resp.status == 0) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->resp.status);
    bool progressed;
    if (t->sink && t->resp.status >= 200 && t->resp.status < 300) {
      progressed = t->sink(bytes);
    } else {
      if (t->resp.body.size() + bytes.size() > kMaxBody) {
        t->too_large = true;
        return 0;  // aborts the transfer
      }
      t->resp.body.append(bytes);
      progressed = true;
    }
    if (!t->got_byte) {
      t->got_byte = true;
      if (auto sp = t->self.lock()) t->owner->start_phase(sp, t->req.idle_timeout, "timeout_idle");
    } else if (progressed) {
      touch(t);
    }
    return size * n;
  }
};

HttpClient::HttpClient(asio::any_io_executor ex) : impl_(std::make_shared<Impl>(ex)) {
  global_init();
  impl_->multi = curl_multi_init();
  if (!impl_->multi) throw Error("curl_multi_init: failed");
  curl_multi_setopt(impl_->multi, CURLMOPT_SOCKETFUNCTION, &Impl::on_socket);
  curl_multi_setopt(impl_->multi, CURLMOPT_SOCKETDATA, impl_.get());
  curl_multi_setopt(impl_->multi, CURLMOPT_TIMERFUNCTION, &Impl::on_timer);
  curl_multi_setopt(impl_->multi, CURLMOPT_TIMERDATA, impl_.get());
}

HttpClient::~HttpClient() {
  for (auto& [easy, t] : impl_->transfers) {
    t->resp.error_kind = "aborted";
    t->resp.error = "HTTP client shut down";
    curl_multi_remove_handle(impl_->multi, easy);
    t->finished = true;
    t->deadline.cancel();
    t->done.cancel();
  }
  impl_->transfers.clear();
  impl_->waiting.clear();
  impl_->timer.cancel();
  impl_->stop_waiting();
}

asio::awaitable<HttpResponse> HttpClient::perform(HttpRequest request, DataSink sink) {
  auto t = std::make_shared<Transfer>(impl_->ex);
  t->owner = impl_.get();
  t->self = t;
  t->req = std::move(request);
  t->sink = std::move(sink);
  t->easy = curl_easy_init();
  if (!t->easy) throw Error("curl_easy_init: failed");
  for (const auto& h : t->req.headers)
    t->header_list = curl_slist_append(t->header_list, h.c_str());
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_URL, t->req.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(t->req.connect_timeout.count()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->header_list);
  if (!t->req.body.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->req.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->req.body.size()));
  }
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());

  impl_->transfers[e] = t;
  impl_->start_phase(t, t->req.connect_timeout + t->req.first_byte_timeout, "timeout_first_byte");
  impl_->enqueue(t);
  if (!t->finished) {
    boost::system::error_code ec;
    co_await t->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (t->resp.status == 0 || t->resp.error_kind.empty()) {
    long code = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    if (code) t->resp.status = code;
  }
  co_return std::move(t->resp);
}

}  // namespace kd::agents
