#include "store/schema.h"

namespace perfbench::schema {

const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> steps = {
      // 0 -> 1: runs, results, samples.
      R"sql(
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  label        TEXT,
  started_at   TEXT NOT NULL,
  finished_at  TEXT,
  status       TEXT NOT NULL CHECK (status IN ('running', 'complete', 'imported')),
  hostname     TEXT NOT NULL DEFAULT '',
  pid          INTEGER NOT NULL DEFAULT 0,
  profile_key  TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,   -- JSON object
  settings     TEXT NOT NULL,   -- JSON object
  command      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_label ON runs(label, id);
CREATE TABLE results (
  id               INTEGER PRIMARY KEY,
  run_id           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  suite            TEXT NOT NULL,
  workload         TEXT NOT NULL,
  params           TEXT NOT NULL,  -- JSON object, declaration order
  variant          TEXT NOT NULL,  -- "k1:v1/k2:v2"
  metric           TEXT NOT NULL,
  unit             TEXT NOT NULL,
  higher_is_better INTEGER NOT NULL CHECK (higher_is_better IN (0, 1)),
  status           TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'skipped')),
  reason           TEXT NOT NULL DEFAULT '',
  n                INTEGER NOT NULL,
  median           REAL,
  mean             REAL,
  stddev           REAL,
  min              REAL,
  max              REAL,
  iqr_rel          REAL,
  noisy            INTEGER NOT NULL DEFAULT 0,
  attributes       TEXT NOT NULL DEFAULT '{}'  -- JSON object
);
CREATE INDEX results_run ON results(run_id);
CREATE TABLE samples (
  result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
  seq       INTEGER NOT NULL,
  value     REAL NOT NULL,
  PRIMARY KEY (result_id, seq)
) WITHOUT ROWID;
)sql",
      // 1 -> 2: named baselines, each pointing at a stored run.
      R"sql(
CREATE TABLE baselines (
  name        TEXT PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE RESTRICT,
  created_at  TEXT NOT NULL
);
CREATE INDEX baselines_run ON baselines(run_id);
)sql",
  };
  return steps;
}

}  // namespace perfbench::schema
