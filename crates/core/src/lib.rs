//! countersign-core (being written).
