//! Integration tests of countersign-gmail against the fake Gmail on 127.0.0.1: every client
//! call, error mapping, retries, quota, transport outcomes, and the OAuth flow through
//! yup-oauth2 with the test playing the browser.

mod calls;
mod errors;
mod oauth;
mod resilience;
mod support;
mod transfer;
