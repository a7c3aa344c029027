// Schema of the perfbench database and the ordered migrations to it.
#pragma once

#include <vector>

namespace perfbench::schema {

// kMigrations[k] upgrades user_version k to k + 1. Version 0 is an empty
// file. Never edit a released step: append a new one and bump
// Store::kSchemaVersion.
const std::vector<const char*>& Migrations();

}  // namespace perfbench::schema
