//! Fake muster (being written).
