//! CLI black-box tests.
