//! Integration tests of review rendering (`countersign_render`): the golden corpus, the
//! XSS corpus, remote content, large messages and the public helpers.

mod addresses;
mod alternatives;
mod api;
mod deny;
mod golden;
mod hidden;
mod large;
mod misleading;
mod remote;
mod support;
mod unicode;
mod xss;
