-- The audit log becomes hash-chained: each row carries the hash of the row before it and its own
-- (sha256 over that previous hash and the row's content; see crates/core/src/store/audit.rs).
-- Changing or removing any row breaks the chain from there on, and `countersign audit verify`
-- names the first row that does not fit. Rows written before this migration are chained the
-- first time the mirror is opened after it.
ALTER TABLE audit_log ADD COLUMN prev_hash TEXT;
ALTER TABLE audit_log ADD COLUMN row_hash TEXT;

-- The newest row and its hash, so that removing the last rows is noticed too.
CREATE TABLE audit_head (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    row_id   INTEGER NOT NULL,
    row_hash TEXT NOT NULL
);

-- The chain is written once, like the rest of the row.
CREATE TRIGGER audit_log_chain_written_once BEFORE UPDATE OF prev_hash, row_hash ON audit_log
    WHEN OLD.row_hash IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
