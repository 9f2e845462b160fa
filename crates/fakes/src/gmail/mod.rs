//! Fake Gmail (being written).
