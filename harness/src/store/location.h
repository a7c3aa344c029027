// Where a store lives: a file path (SQLite) or a server URL (PostgreSQL,
// postgresql://...), and how it is shown without its credentials.
#pragma once

#include <string>

namespace perfbench {

// "postgresql://..." or "postgres://...".
bool IsServerUrl(const std::string& location);
// The location with any password removed ("postgresql://ada:***@host/db",
// "...?password=***"): safe for messages, stored command lines and reports.
// A file path comes back as it is.
std::string RedactLocation(const std::string& location);
// `message` (libpq's, which may quote the URL) with every password `url`
// holds, as written or percent-decoded, replaced by ***.
std::string RedactSecrets(const std::string& message, const std::string& url);
// Every server URL inside a command line redacted (the run's stored command).
std::string RedactCommandLine(const std::string& command);

}  // namespace perfbench
