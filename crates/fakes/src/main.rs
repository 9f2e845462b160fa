//! `countersign-fakes`: serve the fake Gmail and the fake muster until killed.
fn main() {}
