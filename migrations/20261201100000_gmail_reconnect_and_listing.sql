-- Gmail as Google behaves (issue 12).
-- Why an account must be reconnected before it is read or sent from again (NULL: it need not),
-- e.g. Google answered a refresh with invalid_grant.
ALTER TABLE accounts ADD COLUMN reconnect_reason TEXT;
-- When drafts.list last reconciled the whole mirror of the account: it is the authority on
-- deletions, which history.list?labelId=DRAFT need not report.
ALTER TABLE sync_cursors ADD COLUMN last_listed_at TEXT;
