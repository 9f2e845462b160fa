-- Gmail's `internalDate` of each draft version (epoch ms, Google's clock), as drafts.get gives
-- it. A send of that version is dated after it by Google's own clock: the send path looks for a
-- lost send's message from there, not from this computer's clock, which may run fast. NULL for
-- muster versions and for versions synced before this column.
ALTER TABLE draft_versions ADD COLUMN gmail_internal_date INTEGER;
