//! countersign-gmail (placeholder, being written).
