-- Gmail labels, mirrored (issue 38): the account's labels as labels.list gives them, and the
-- label ids each draft's current message carries (drafts.get, then history's labelsAdded /
-- labelsRemoved). A rule may be scoped to a label. Labels are written by the agent (it can
-- label its own drafts), so they are a scope, never a credential: nothing here is sealed, and
-- the sealed rows (decisions, audit) are not touched.
CREATE TABLE gmail_labels (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    label_id   TEXT NOT NULL,
    name       TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('system', 'user')),
    PRIMARY KEY (account_id, label_id)
);

-- The labels of a draft's current version, one row each (none for muster drafts).
CREATE TABLE item_labels (
    item_id  INTEGER NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
    label_id TEXT NOT NULL,
    PRIMARY KEY (item_id, label_id)
);
