-- The local mirror of Countersign: accounts, review items and every version ever seen,
-- muster routes, the decision outbox, the audit log and sync cursors.
-- Never edit a migration once it has landed: add a new one.

CREATE TABLE accounts (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('gmail', 'muster')),
    label          TEXT NOT NULL,
    -- Gmail: the mailbox address; muster: the instance URL.
    address        TEXT NOT NULL,
    api_base       TEXT NOT NULL,
    -- JSON array of OAuth scopes Google reported as granted (Gmail only).
    granted_scopes TEXT NOT NULL DEFAULT '[]',
    -- 'keyring' or 'file': where the secret lives; never the secret itself.
    secret_storage TEXT NOT NULL DEFAULT 'keyring' CHECK (secret_storage IN ('keyring', 'file', 'none')),
    created_at     TEXT NOT NULL,
    UNIQUE (kind, address)
);

CREATE TABLE review_items (
    id              INTEGER PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    source          TEXT NOT NULL CHECK (source IN ('gmail', 'muster')),
    -- Gmail draft id, or muster plugin draft id: stable for the life of the draft.
    external_id     TEXT NOT NULL,
    state           TEXT NOT NULL,
    -- Gmail: message id; muster: updatedAt. Changes on every update of the draft.
    version         TEXT NOT NULL,
    thread_id       TEXT,
    subject         TEXT NOT NULL DEFAULT '',
    from_addr       TEXT NOT NULL DEFAULT '',
    recipients      TEXT NOT NULL DEFAULT '',
    snippet         TEXT NOT NULL DEFAULT '',
    -- muster only
    route_id        TEXT,
    plugin          TEXT,
    session         TEXT,
    message_ref     TEXT,
    check_state     TEXT,
    check_detail    TEXT,
    redraft_of      TEXT,
    redraft_number  INTEGER NOT NULL DEFAULT 0,
    -- JSON of the message this draft answers (parent headers, or muster's inReplyTo).
    answers_json    TEXT,
    -- The plugin's or Google's reason when a send was refused; or why it is a conflict.
    state_reason    TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (account_id, external_id)
);
CREATE INDEX review_items_state ON review_items (state);

CREATE TABLE draft_versions (
    id            INTEGER PRIMARY KEY,
    item_id       INTEGER NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    version       TEXT NOT NULL,
    content_kind  TEXT NOT NULL CHECK (content_kind IN ('raw', 'text')),
    content       BLOB NOT NULL,
    sha256        TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    UNIQUE (item_id, version)
);

CREATE TABLE attachments (
    id           INTEGER PRIMARY KEY,
    version_id   INTEGER NOT NULL REFERENCES draft_versions (id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    file_name    TEXT,
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    inline       INTEGER NOT NULL DEFAULT 0,
    content_id   TEXT,
    UNIQUE (version_id, position)
);

CREATE TABLE routes (
    account_id    TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    route_id      TEXT NOT NULL,
    message_id    TEXT NOT NULL,
    session       TEXT NOT NULL,
    state         TEXT NOT NULL,
    routed_via    TEXT,
    redraft_of    TEXT,
    redraft_count INTEGER NOT NULL DEFAULT 0,
    reason        TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (account_id, route_id)
);
CREATE INDEX routes_message ON routes (account_id, message_id);

-- The outbox: a decision is written here before anything goes on the wire.
CREATE TABLE decisions (
    id              INTEGER PRIMARY KEY,
    item_id         INTEGER NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('approve', 'reject')),
    reason          TEXT,
    -- What the owner reviewed: the version and the sha256 of its bytes.
    version         TEXT NOT NULL,
    digest          TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN
                      ('queued', 'dispatching', 'done', 'conflict', 'failed', 'uncertain', 'cancelled')),
    created_at      TEXT NOT NULL,
    -- End of the undo window: stored, so a restart neither loses nor double-sends.
    due_at          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    claimed_by      TEXT,
    claimed_at      TEXT,
    -- The Message-ID the send carries (added when the draft had none), to find it again.
    rfc822_message_id TEXT,
    outcome_detail  TEXT,
    finished_at     TEXT
);
CREATE INDEX decisions_state ON decisions (state, due_at);
-- At most one live decision per item.
CREATE UNIQUE INDEX decisions_one_live_per_item ON decisions (item_id)
    WHERE state IN ('queued', 'dispatching', 'uncertain');

-- Append-only: who decided what, on which version digest, when, with which outcome.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    item_id     INTEGER REFERENCES review_items (id) ON DELETE SET NULL,
    decision_id INTEGER REFERENCES decisions (id) ON DELETE SET NULL,
    action      TEXT NOT NULL,
    version     TEXT,
    digest      TEXT,
    outcome     TEXT,
    detail      TEXT
);
CREATE INDEX audit_log_item ON audit_log (item_id);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OF at, actor, action, version, digest, outcome, detail
    ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

CREATE TABLE sync_cursors (
    account_id     TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    -- Gmail history id; unused for muster (it has no replay).
    history_id     TEXT,
    last_sync_at   TEXT,
    last_full_at   TEXT,
    last_error     TEXT,
    online         INTEGER NOT NULL DEFAULT 1
);
