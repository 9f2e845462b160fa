-- The sealed record (issue 35): audit rows and decisions carry an HMAC-SHA256 made with a key
-- kept in the OS keyring, not in this file (crates/core/src/store/seal.rs). Someone who can
-- write this file but not read the keyring can no longer add, change, remove or re-chain rows
-- unnoticed, nor queue a decision the dispatcher will send.

-- The references as written (JSON [item_id, decision_id, view_id]): the foreign keys are set to
-- NULL by the schema when an account is removed, so the seal covers this copy, and `verify`
-- checks each live reference against it.
ALTER TABLE audit_log ADD COLUMN refs TEXT;
-- The previous row's MAC and this row's: MAC(key, previous MAC, every column).
ALTER TABLE audit_log ADD COLUMN prev_mac TEXT;
ALTER TABLE audit_log ADD COLUMN mac TEXT;

CREATE TRIGGER audit_log_seal_written_once BEFORE UPDATE OF refs, prev_mac, mac ON audit_log
    WHEN OLD.mac IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

-- One row: which key seals this mirror (its id in the keyring, and a MAC that tells the right
-- key from another), what the first sealing found, and the sealed head of the log.
CREATE TABLE record_seal (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    mirror_id   TEXT NOT NULL,
    key_check   TEXT NOT NULL,
    sealed_at   TEXT NOT NULL,
    legacy_rows INTEGER NOT NULL,
    legacy_note TEXT,
    head_row    INTEGER,
    head_mac    TEXT,
    head_seal   TEXT
);

-- A decision is linked to the audit row that recorded it and, for an approval, the view of the
-- version approved; `seal` is the MAC over its fixed columns and those links.
ALTER TABLE decisions ADD COLUMN audit_id INTEGER;
ALTER TABLE decisions ADD COLUMN view_id INTEGER;
ALTER TABLE decisions ADD COLUMN seal TEXT;
