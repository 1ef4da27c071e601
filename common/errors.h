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

// The user's input is wrong: a path that does not exist, a file they wrote that does not parse,
// a value out of range. Commands exit 2 (a refusal naming the problem), never "internal error".
class InputError : public Error {
 public:
  using Error::Error;
};

// The infrastructure failed in a way that may pass: the provider, a chip, a tool. Commands exit
// kExitTempFail; a campaign journals it as an error and retries it on --resume.
class InfraError : public Error {
 public:
  using Error::Error;
};

// Symbolic name of an errno value ("EPERM"), or "errno 123" when unknown.
std::string errno_name(int err);

// "<call>(<object>): <ERRNO>" for a failed system call.
std::string sys_message(std::string_view call, std::string_view object, int err);

// Throws kd::Error with sys_message(call, object, err).
[[noreturn]] void throw_sys(std::string_view call, std::string_view object, int err);

// Throws for a failed open(2) of a path the caller was given: InputError when the path is not
// there or not a file (ENOENT, ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG), else kd::Error.
[[noreturn]] void throw_open(std::string_view object, int err);

// Quotes a path or string for messages: "a\"b" -> "\"a\\\"b\"".
std::string quote(std::string_view s);

}  // namespace kd
