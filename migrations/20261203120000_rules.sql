-- Rules: the owner's decisions made in advance (docs/rules.md). A rule is versioned: every
-- change writes a new row of rule_versions, and a decision a rule made names the version that
-- made it (actor `rule:<id>@<version>`). A new rule starts in shadow: it only records what it
-- would do. Removed rules are kept (removed_at) so that the record can still name them.
CREATE TABLE rules (
    id         INTEGER PRIMARY KEY,
    position   INTEGER NOT NULL,
    version    INTEGER NOT NULL DEFAULT 1,
    mode       TEXT NOT NULL DEFAULT 'shadow' CHECK (mode IN ('shadow', 'armed')),
    definition TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    removed_at TEXT
);

CREATE TABLE rule_versions (
    rule_id    INTEGER NOT NULL REFERENCES rules (id),
    version    INTEGER NOT NULL,
    definition TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (rule_id, version)
);

-- What each rule made of each version of each draft it saw: its verdict, whether it was
-- armed, why an armed rule did not act (a guard), and the decision it made when it did.
CREATE TABLE rule_evaluations (
    id           INTEGER PRIMARY KEY,
    rule_id      INTEGER NOT NULL REFERENCES rules (id),
    rule_version INTEGER NOT NULL,
    item_id      INTEGER NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    version      TEXT NOT NULL,
    digest       TEXT NOT NULL,
    verdict      TEXT NOT NULL CHECK (verdict IN ('approve', 'hold', 'reject', 'no_match')),
    armed        INTEGER NOT NULL,
    held         TEXT,
    -- A guard that passes with time (still being written, a failed sync, the daily cap, Hold
    -- everything): the rule looks again from then on.
    retry_at     TEXT,
    decision_id  INTEGER REFERENCES decisions (id),
    evaluated_at TEXT NOT NULL,
    UNIQUE (rule_id, rule_version, item_id, version)
);
CREATE INDEX rule_evaluations_item ON rule_evaluations (item_id, version);

-- Who made a decision, on the decision itself: the queue says "approved by rule R".
ALTER TABLE decisions ADD COLUMN decided_by TEXT;
