//! Fuzz target over the whole render pipeline: arbitrary bytes as a raw draft (both with and
//! without remote content), every attachment saved and previewed, the same bytes as a muster
//! plain-text draft, and the diff between the versions. Nothing may panic.
#![no_main]

use countersign_render::{
    attachment_bytes, diff_versions, render_message, render_plain_text, Address, AttachmentPreview,
    DraftBytes, ParentMessage, RenderOptions, RenderedDraft,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parent = ParentMessage {
        from: vec![Address {
            name: None,
            email: "ana@client.example.org".into(),
        }],
        message_id: Some("p@x".into()),
        ..ParentMessage::default()
    };
    let blocked = RenderOptions {
        owner_domains: vec!["example.com".into()],
        parent: Some(parent.clone()),
        ..RenderOptions::default()
    };
    let allowed = RenderOptions {
        allow_remote_content: true,
        is_reply: true,
        ..RenderOptions::default()
    };
    let a = render_message(data, &blocked);
    let b = render_message(data, &allowed);
    for meta in &a.attachments {
        if let Some((meta, bytes)) = attachment_bytes(data, meta.index) {
            let _ = AttachmentPreview::of(&meta, &bytes, 4096);
        }
    }
    let text = String::from_utf8_lossy(data);
    let c = render_plain_text(&text, Some(&parent), &blocked);
    let blocked_draft = RenderedDraft {
        bytes: DraftBytes::Message(data),
        view: &a,
    };
    let allowed_draft = RenderedDraft {
        bytes: DraftBytes::Message(data),
        view: &b,
    };
    let reply = RenderedDraft {
        bytes: DraftBytes::Text(&text),
        view: &c,
    };
    let _ = diff_versions(blocked_draft, allowed_draft);
    let _ = diff_versions(blocked_draft, reply);
    let _ = diff_versions(reply, blocked_draft);
});
