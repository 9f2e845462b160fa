//! `show --machine-text`: everything in a draft that a program could read and the normal
//! rendering does not show — hidden passages, text only machines read, and styling no check
//! evaluates — each marked with where it is.

use countersign_core::render::ReviewView;

/// Prints the machine-readable text of `view` (nothing but a line saying so when there is none).
pub fn print(view: &ReviewView) {
    println!("\n--- What machines read (not shown in the review) ---");
    let mut any = false;
    for passage in &view.hidden_text {
        any = true;
        let who = if passage.only_recipients_see {
            "recipients see it, the review does not"
        } else if passage.shown_in_review {
            "the review shows it, recipients' programs hide it"
        } else {
            "hidden from recipients and from the review"
        };
        println!("[hidden: {}; {who}] {}", passage.technique, passage.text);
    }
    for text in &view.machine_text {
        any = true;
        let mark = if text.flagged { "!" } else { " " };
        println!("{mark}[{}] {}", text.source, text.text);
    }
    for style in &view.unverifiable_styling {
        any = true;
        println!("[styling not evaluated, {}] {}", style.place, style.what);
    }
    if !any {
        println!("Nothing: every word a program reads is in the review.");
    }
}
