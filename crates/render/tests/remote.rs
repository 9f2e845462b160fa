//! Remote content: blocked by default, never fetched by the library, kept when allowed.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use countersign_render::{render_message, RenderOptions};

use crate::support::{body_of, html_draft};

/// A tiny image server on 127.0.0.1 that counts every connection it accepts.
struct ImageServer {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl ImageServer {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&hits);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\nContent-Length: 6\r\n\r\nGIF89a",
                );
            }
        });
        ImageServer { port, hits }
    }

    /// Proves the server answers, so "0 requests" below is not a dead server.
    fn probe(&self) {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(b"GET /probe HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    fn hits(&self) -> usize {
        // Give a (hypothetical) background fetch time to arrive before counting.
        thread::sleep(Duration::from_millis(200));
        self.hits.load(Ordering::SeqCst)
    }
}

fn draft_for(port: u16) -> Vec<u8> {
    html_draft(&format!(
        "<p style=\"background: url(http://127.0.0.1:{port}/bg.gif)\">Hello</p>\
         <img src=\"http://127.0.0.1:{port}/pixel.gif\" alt=\"tracker\">\
         <table background=\"http://127.0.0.1:{port}/table.gif\"><tr><td>x</td></tr></table>"
    ))
}

#[test]
fn a_remote_image_is_counted_and_removed_and_never_fetched() {
    let server = ImageServer::start();
    let view = render_message(&draft_for(server.port), &RenderOptions::default());

    let pixel = format!("http://127.0.0.1:{}/pixel.gif", server.port);
    assert!(
        view.remote_content.urls.contains(&pixel),
        "{:?}",
        view.remote_content
    );
    assert_eq!(view.remote_content.blocked_count, 3);
    assert!(!view.remote_content.allowed);
    assert!(!view.html_body.contains("127.0.0.1"), "{}", view.html_body);
    assert!(view.html_body.contains("img-src data:;"));
    assert_eq!(server.hits(), 0, "rendering reached the image server");
    server.probe();
    assert_eq!(server.hits(), 1);
}

#[test]
fn allowing_remote_content_keeps_the_urls_and_opens_the_csp() {
    let server = ImageServer::start();
    let options = RenderOptions {
        allow_remote_content: true,
        ..RenderOptions::default()
    };
    let view = render_message(&draft_for(server.port), &options);

    let body = body_of(&view.html_body);
    assert!(
        body.contains(&format!(
            "src=\"http://127.0.0.1:{}/pixel.gif\"",
            server.port
        )),
        "{body}"
    );
    assert!(body.contains(&format!(
        "background=\"http://127.0.0.1:{}/table.gif\"",
        server.port
    )));
    assert!(body.contains("url(http://127.0.0.1:"));
    assert_eq!(view.remote_content.blocked_count, 0);
    assert_eq!(view.remote_content.urls.len(), 3);
    assert!(view.html_body.contains("img-src data: https: http:;"));
    // Even when allowed, the library only writes the URL down; the webview fetches it.
    assert_eq!(server.hits(), 0);
}
