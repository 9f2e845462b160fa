//! Rendering a draft for review (being written).
