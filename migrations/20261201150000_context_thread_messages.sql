-- The conversation a Gmail reply draft belongs to, read once per thread during sync
-- (threads.get metadata), so the review shows what the draft answers even offline. The raw
-- bytes are kept only for the message a draft answers (messages.get raw), rendered with the
-- same pipeline as the draft.
CREATE TABLE thread_messages (
    account_id        TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    thread_id         TEXT NOT NULL,
    -- Gmail's message id.
    gmail_id          TEXT NOT NULL,
    -- Order in the thread, oldest first.
    position          INTEGER NOT NULL,
    -- The RFC 5322 Message-ID, without angle brackets, when the message has one.
    rfc822_message_id TEXT,
    from_addr         TEXT NOT NULL DEFAULT '',
    subject           TEXT NOT NULL DEFAULT '',
    -- The Date header as written.
    date              TEXT,
    snippet           TEXT NOT NULL DEFAULT '',
    raw               BLOB,
    PRIMARY KEY (account_id, thread_id, gmail_id)
);
