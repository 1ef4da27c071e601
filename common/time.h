// Time as kdispatch records it: RFC 3339 UTC stamps with milliseconds, written in one place and
// read strictly in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kd {

// Seconds since the epoch of an RFC 3339 timestamp ("2026-03-02T10:00:00.5Z", "+01:00"
// offsets). Strict: fixed-width digit fields in range, a fraction with at least one digit,
// nothing after the zone; a forged or mangled stamp is refused rather than normalized into some
// other time.
std::optional<double> parse_rfc3339(std::string_view ts);

// "2026-12-02T15:03:01.123Z" for `unix_ms` milliseconds since the epoch.
std::string format_rfc3339_ms(std::int64_t unix_ms);
// "2026-12-02T15:03:01Z" for whole seconds since the epoch (git's commit times).
std::string format_rfc3339_s(std::int64_t unix_s);

// Now, as format_rfc3339_ms writes it.
std::string utc_now_rfc3339();

}  // namespace kd
