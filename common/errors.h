// Error values that name the call and the object, e.g.
//   mount("/repo" -> "/work", MS_BIND|MS_RDONLY): EPERM
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace kd {

// An operation on the outside world failed; the message is complete and user-facing.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Symbolic name of an errno value ("EPERM"), or "errno 123" when unknown.
std::string errno_name(int err);

// "<call>(<object>): <ERRNO>" for a failed system call.
std::string sys_message(std::string_view call, std::string_view object, int err);

// Throws kd::Error with sys_message(call, object, err).
[[noreturn]] void throw_sys(std::string_view call, std::string_view object, int err);

// Quotes a path or string for messages: "a\"b" -> "\"a\\\"b\"".
std::string quote(std::string_view s);

}  // namespace kd
