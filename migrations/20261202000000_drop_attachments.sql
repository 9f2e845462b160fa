-- An attachment's metadata was written here at sync and never read: the review lists the
-- attachments from the version's own bytes (kept in draft_versions) with what it sniffs of
-- them, which this table could not hold. One description of an attachment, not two.
DROP TABLE attachments;
