-- Look-ups of a decision whose outcome is unknown, counted apart from `attempts` (which every
-- claim increments): a process killed mid-claim must not spend the look-up budget.
ALTER TABLE decisions ADD COLUMN lookups INTEGER NOT NULL DEFAULT 0;
