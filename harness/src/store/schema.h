// Schema of the perfbench database and the ordered migrations to it.
#pragma once

#include <vector>

namespace perfbench::schema {

// kMigrations[k] upgrades user_version k to k + 1. Version 0 is an empty
// file. Never edit a released step: append a new one and bump
// Store::kSchemaVersion.
const std::vector<const char*>& Migrations();

// PostgreSQL's steps, each from one version to a later one: the server
// store began at version 5, in one step; later versions append a step to
// both lists.
struct Step {
  int from, to;
  const char* sql;
};
const std::vector<Step>& PostgresMigrations();

}  // namespace perfbench::schema
