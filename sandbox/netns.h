// Network namespace: only a loopback interface, brought up so local servers and tests work.
#pragma once

namespace kd::sandbox {

// Sets IFF_UP on "lo" in the caller's network namespace; throws kd::Error naming "netns".
void bring_loopback_up();

}  // namespace kd::sandbox
