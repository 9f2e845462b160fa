//! core integration tests
