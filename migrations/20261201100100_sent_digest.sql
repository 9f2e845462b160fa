-- What left, not only what was approved: the sha256 of the bytes a send carried, and the header
-- Countersign added to the reviewed bytes first (a Message-ID, so the send can be found again),
-- recorded before the request goes out.
ALTER TABLE decisions ADD COLUMN sent_digest TEXT;
ALTER TABLE decisions ADD COLUMN sent_header_added TEXT;
