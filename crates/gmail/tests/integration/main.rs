//! Integration tests of countersign-gmail against the fake Gmail on 127.0.0.1.
