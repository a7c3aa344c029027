#include "store/schema.h"

namespace perfbench::schema {
namespace {

// 0 -> 1: runs, results, samples.
constexpr const char* kV1 = R"sql(
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
)sql";

// 1 -> 2: named baselines, each pointing at a stored run.
constexpr const char* kV2 = R"sql(
CREATE TABLE baselines (
  name        TEXT PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE RESTRICT,
  created_at  TEXT NOT NULL
);
CREATE INDEX baselines_run ON baselines(run_id);
)sql";

// 2 -> 3: processes as replicates. Every sample records the process
// that measured it; results carry their variance components; a
// baseline names one or more runs. The baselines table is rebuilt
// without its run column (SQLite cannot drop a foreign-key column):
// the new table is made and referenced first, so dropping the old one
// cascades nothing.
constexpr const char* kV3 = R"sql(
ALTER TABLE samples ADD COLUMN process INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN processes INTEGER NOT NULL DEFAULT 1;
ALTER TABLE results ADD COLUMN var_within REAL;
ALTER TABLE results ADD COLUMN var_between REAL;
CREATE TABLE baselines_v3 (
  name        TEXT PRIMARY KEY,
  created_at  TEXT NOT NULL
);
INSERT INTO baselines_v3 (name, created_at) SELECT name, created_at FROM baselines;
CREATE TABLE baseline_runs (
  name    TEXT NOT NULL REFERENCES baselines_v3(name) ON DELETE CASCADE,
  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE RESTRICT,
  PRIMARY KEY (name, run_id)
) WITHOUT ROWID;
INSERT INTO baseline_runs (name, run_id) SELECT name, run_id FROM baselines;
DROP TABLE baselines;
ALTER TABLE baselines_v3 RENAME TO baselines;
CREATE INDEX baseline_runs_run ON baseline_runs(run_id);
)sql";

// 3 -> 4: a run's verdict as a baseline candidate: what its own gate said
// (pass, regression, inconclusive) or `accepted` (baseline accept RUN).
// Rolling baselines (--baseline label:NAME) take runs without a row (plain
// runs), passed and accepted ones.
constexpr const char* kV4 = R"sql(
CREATE TABLE run_verdicts (
  run_id      INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  verdict     TEXT NOT NULL CHECK (verdict IN ('pass', 'regression', 'inconclusive', 'accepted')),
  decided_at  TEXT NOT NULL
);
)sql";

}  // namespace

const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> steps = {kV1, kV2, kV3, kV4};
  return steps;
}

}  // namespace perfbench::schema
