-- An owner's Undo or rejection of a version is final for every rule, present and future, until
-- the agent writes a new version (docs/rules.md, "The agent is the adversary"). It is kept in
-- the mirror, not in memory, so that neither a restart nor a rule change (which makes every
-- rule look at the pending drafts again) can forget it. The first veto of a version is kept.
CREATE TABLE owner_vetoes (
    item_id    INTEGER NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    version    TEXT NOT NULL,
    digest     TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('undo', 'reject')),
    actor      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (item_id, version)
);
