// The SQLite engine of the store: one file, opened (created, checked,
// migrated) into a connection with the current schema.
#pragma once

#include <memory>
#include <string>

#include "store/sql.h"
#include "store/store.h"

namespace perfbench {

// Refuses a missing file (unless kCreate), a foreign or newer one
// (StoreInputError); migrates an older schema in one transaction (kReadOnly:
// a copy in memory, the file's bytes unchanged).
std::unique_ptr<sql::Connection> OpenSqlite(const std::string& path, Store::Mode mode);

}  // namespace perfbench
