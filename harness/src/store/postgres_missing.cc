// The PostgreSQL engine when perfbench was built without libpq.
#include "store/location.h"
#include "store/postgres_connection.h"

namespace perfbench {

std::unique_ptr<sql::Connection> OpenPostgres(const std::string& url, Store::Mode) {
  throw StoreInputError("'" + RedactLocation(url) +
                        "': this perfbench was built without PostgreSQL support (install libpq-dev and rebuild)");
}

bool PostgresAvailable() { return false; }

}  // namespace perfbench
