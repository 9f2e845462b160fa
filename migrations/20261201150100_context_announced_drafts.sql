-- When the owner was told a draft awaits review ("3 new drafts to review", one notification per
-- burst). Items already in the mirror count as told, so the upgrade announces nothing old.
ALTER TABLE review_items ADD COLUMN announced_at TEXT;
UPDATE review_items SET announced_at = updated_at;
