// The PostgreSQL engine of the store (libpq): a server shared by a fleet of
// machines. Built when libpq is found (PERFBENCH_WITH_POSTGRES); without it
// opening a server URL says so.
#pragma once

#include <memory>
#include <string>

#include "store/sql.h"
#include "store/store.h"

namespace perfbench {

// `url`: postgresql://[user@]host[:port]/dbname[?...]; credentials come from
// PGPASSFILE (~/.pgpass) or a service file, not the URL, by preference.
// A malformed URL, a database that is not perfbench's or is newer:
// StoreInputError. An unreachable server or a failed login: StoreError.
// kCreate makes the tables in an empty database; kReadOnly refuses to write
// (a read-only transaction) and refuses a schema it would have to upgrade.
std::unique_ptr<sql::Connection> OpenPostgres(const std::string& url, Store::Mode mode);

// True when this build can open server URLs.
bool PostgresAvailable();

}  // namespace perfbench
