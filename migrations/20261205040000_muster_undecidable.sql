-- A muster draft Countersign cannot fully read (a state it does not know, or a record that does
-- not decode) is mirrored so the owner sees it, but no decision may bind to it: the sentence
-- saying why is kept here while muster sends it so, and cleared (NULL) once it reads normally.
ALTER TABLE review_items ADD COLUMN undecidable_reason TEXT;
