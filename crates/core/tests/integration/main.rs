//! Integration tests of countersign-core on real SQLite files in temp dirs.

mod store;
