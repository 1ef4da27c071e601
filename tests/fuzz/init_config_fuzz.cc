// Feeds arbitrary bytes to the box's init config decoder, which reads what crosses the control
// socket: it must never crash and throws only kd::Error, and what it accepts is exactly what
// encoding the decoded config gives back (one byte string per config, nothing ignored).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/errors.h"
#include "sandbox/init_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  kd::sandbox::InitConfig config;
  try {
    config = kd::sandbox::decode_init_config(bytes);
  } catch (const kd::Error&) {
    return 0;
  }
  if (kd::sandbox::encode_init_config(config) != bytes) std::abort();
  return 0;
}
