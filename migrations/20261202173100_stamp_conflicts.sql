-- A muster version is its updatedAt stamp. When the same stamp comes back with other text, the
-- sha256 of that other text is kept here: the stamp no longer names one text, so no decision may
-- bind to it (muster's decide would match whichever text it holds).
ALTER TABLE draft_versions ADD COLUMN restamped_sha256 TEXT;
