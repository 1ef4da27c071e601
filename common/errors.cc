#include "common/errors.h"

#include <cerrno>

namespace kd {

namespace {

struct ErrnoName {
  int err;
  const char* name;
};

#define KD_ERRNO(e) \
  ErrnoName {       \
    e, #e           \
  }
constexpr ErrnoName kErrnoNames[] = {
    KD_ERRNO(EPERM),         KD_ERRNO(ENOENT),       KD_ERRNO(ESRCH),
    KD_ERRNO(EINTR),         KD_ERRNO(EIO),          KD_ERRNO(ENXIO),
    KD_ERRNO(E2BIG),         KD_ERRNO(ENOEXEC),      KD_ERRNO(EBADF),
    KD_ERRNO(ECHILD),        KD_ERRNO(EAGAIN),       KD_ERRNO(ENOMEM),
    KD_ERRNO(EACCES),        KD_ERRNO(EFAULT),       KD_ERRNO(EBUSY),
    KD_ERRNO(EEXIST),        KD_ERRNO(EXDEV),        KD_ERRNO(ENODEV),
    KD_ERRNO(ENOTDIR),       KD_ERRNO(EISDIR),       KD_ERRNO(EINVAL),
    KD_ERRNO(ENFILE),        KD_ERRNO(EMFILE),       KD_ERRNO(ENOTTY),
    KD_ERRNO(ETXTBSY),       KD_ERRNO(EFBIG),        KD_ERRNO(ENOSPC),
    KD_ERRNO(ESPIPE),        KD_ERRNO(EROFS),        KD_ERRNO(EMLINK),
    KD_ERRNO(EPIPE),         KD_ERRNO(EDOM),         KD_ERRNO(ERANGE),
    KD_ERRNO(EDEADLK),       KD_ERRNO(ENAMETOOLONG), KD_ERRNO(ENOLCK),
    KD_ERRNO(ENOSYS),        KD_ERRNO(ENOTEMPTY),    KD_ERRNO(ELOOP),
    KD_ERRNO(ENODATA),       KD_ERRNO(EOVERFLOW),    KD_ERRNO(EILSEQ),
    KD_ERRNO(ENOTSOCK),      KD_ERRNO(EDESTADDRREQ), KD_ERRNO(EMSGSIZE),
    KD_ERRNO(EPROTOTYPE),    KD_ERRNO(ENOPROTOOPT),  KD_ERRNO(EPROTONOSUPPORT),
    KD_ERRNO(EOPNOTSUPP),    KD_ERRNO(EAFNOSUPPORT), KD_ERRNO(EADDRINUSE),
    KD_ERRNO(EADDRNOTAVAIL), KD_ERRNO(ENETDOWN),     KD_ERRNO(ENETUNREACH),
    KD_ERRNO(ECONNABORTED),  KD_ERRNO(ECONNRESET),   KD_ERRNO(ENOBUFS),
    KD_ERRNO(EISCONN),       KD_ERRNO(ENOTCONN),     KD_ERRNO(ETIMEDOUT),
    KD_ERRNO(ECONNREFUSED),  KD_ERRNO(EHOSTUNREACH), KD_ERRNO(EALREADY),
    KD_ERRNO(EINPROGRESS),   KD_ERRNO(ESTALE),       KD_ERRNO(EDQUOT),
    KD_ERRNO(ECANCELED),     KD_ERRNO(EOWNERDEAD),
};
#undef KD_ERRNO

}  // namespace

std::string errno_name(int err) {
  for (const auto& n : kErrnoNames) {
    if (n.err == err) return n.name;
  }
  return "errno " + std::to_string(err);
}

std::string sys_message(std::string_view call, std::string_view object, int err) {
  std::string out(call);
  out += '(';
  out += object;
  out += "): ";
  out += errno_name(err);
  return out;
}

void throw_open(std::string_view object, int err) {
  if (err == ENOENT || err == ENOTDIR || err == EISDIR || err == ELOOP || err == ENAMETOOLONG)
    throw InputError(sys_message("open", object, err));
  throw_sys("open", object, err);
}

void throw_sys(std::string_view call, std::string_view object, int err) {
  throw Error(sys_message(call, object, err));
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace kd
