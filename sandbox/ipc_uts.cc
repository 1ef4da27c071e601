#include "sandbox/ipc_uts.h"

#include <unistd.h>

#include <cerrno>

#include "common/errors.h"

namespace kd::sandbox {

void set_box_hostname(const std::string& name) {
  if (::sethostname(name.data(), name.size()) != 0) throw_sys("uts: sethostname", name, errno);
}

}  // namespace kd::sandbox
