// Text the store and the JSON outputs keep is UTF-8 (JSON requires it;
// PostgreSQL refuses anything else in a UTF8 database). Checked where text
// comes in (the command line) and made valid where it is kept (the store),
// so no byte from a hostname, an exception or an older file can break a
// `show --format json` or a push.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace perfbench {

// The offset of the first byte that does not begin a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF); nullopt when `s` is valid.
std::optional<size_t> InvalidUtf8At(std::string_view s);

// `s` with each ill-formed subsequence replaced by U+FFFD, as Unicode's
// "maximal subpart" practice (and Python's bytes.decode("utf-8", "replace"))
// does; valid text comes back unchanged.
std::string ValidUtf8(std::string_view s);

}  // namespace perfbench
