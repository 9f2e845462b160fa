-- How a muster account's changes reach the mirror right now, written by the running app:
-- 'live' (muster's event stream delivers) or 'polling' (the stream does not deliver, the API is
-- polled). NULL: not followed by a running app (Gmail, or only the CLI synced it). The CLI's
-- `countersign status` and the desktop status bar read it beside `online`.
ALTER TABLE sync_cursors ADD COLUMN delivery TEXT;
