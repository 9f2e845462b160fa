//! Remote content: blocked by default, never fetched by the library, kept when allowed.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;

use countersign_render::{render_message, RenderOptions};

use crate::support::{body_of, html_draft};

/// A tiny image server on 127.0.0.1 that serves one connection at a time, in the order they
/// were made, and writes down the request line of each.
struct ImageServer {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl ImageServer {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut buf = [0u8; 1024];
                let read = stream.read(&mut buf).unwrap_or(0);
                let text = String::from_utf8_lossy(&buf[..read]);
                let line = text.lines().next().unwrap_or("(nothing sent)").to_owned();
                log.lock().unwrap().push(line);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\nContent-Length: 6\r\n\r\nGIF89a",
                );
            }
        });
        ImageServer { port, requests }
    }

    /// Every request the server was sent up to now: a probe of ours is connected and answered
    /// last, so any connection made before it (during the rendering, say) was answered and
    /// written down first. The probe also proves the server answers, so a list with only the
    /// probe in it is not a dead server.
    fn requests_up_to_a_probe(&self) -> Vec<String> {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(b"GET /probe HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        self.requests.lock().unwrap().clone()
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
    assert_eq!(
        server.requests_up_to_a_probe(),
        ["GET /probe HTTP/1.1"],
        "rendering reached the image server"
    );
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
    assert_eq!(server.requests_up_to_a_probe(), ["GET /probe HTTP/1.1"]);
}
