//! countersign-core (being written).
pub mod render;
