-- Gmail's id of the message a send created (`id` of the Message `drafts.send` answers), or of the
-- message a lost send was found as in Sent: what the owner can look up in Gmail, and the proof
-- that a decision was carried out that does not rest on the RFC 822 Message-ID (Gmail may
-- replace that one on send).
ALTER TABLE decisions ADD COLUMN gmail_message_id TEXT;
