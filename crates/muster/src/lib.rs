//! countersign-muster (placeholder, being written).
