-- What the service said when it took a decision, in its own words (muster's `note` on a decide,
-- e.g. "Queued: the plugin sends it and a refusal comes back here."): shown to the owner and
-- kept in the audit row of the dispatch instead of a paraphrase.
ALTER TABLE decisions ADD COLUMN service_note TEXT;
