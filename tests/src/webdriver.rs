//! A small W3C WebDriver client over reqwest: sessions, elements, keys, scripts, screenshots.
//!
//! Only what the desktop suite needs, spoken exactly as the W3C spec words it
//! (<https://www.w3.org/TR/webdriver2/>), so it works against WebKitGTK's `WebKitWebDriver` and any
//! other conforming driver.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine as _;
use serde_json::{json, Value};

/// The spec's "web element identifier": the key under which an element reference travels.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The spec's code point for the (left) Shift key.
const SHIFT: &str = "\u{E008}";

/// How often `wait_for…` polls.
const POLL: Duration = Duration::from_millis(100);

/// A WebDriver session, i.e. one running app under automation.
#[derive(Clone, Debug)]
pub struct Session {
    http: reqwest::Client,
    /// `http://127.0.0.1:PORT/session/ID`
    url: String,
}

/// A reference to an element of the page, valid while the page lives.
#[derive(Clone, Debug)]
pub struct Element {
    session: Session,
    id: String,
}

impl Session {
    /// Starts a session on the driver at `driver_url` with W3C `capabilities` (the value of
    /// `capabilities.alwaysMatch`).
    pub async fn start(driver_url: &str, capabilities: Value) -> Result<Session> {
        let http = reqwest::Client::builder()
            // Starting WebKit and the app can take a while on a busy 2-core machine.
            .timeout(Duration::from_secs(120))
            .build()
            .context("cannot build the WebDriver HTTP client")?;
        let body = json!({"capabilities": {"alwaysMatch": capabilities}});
        let value = send(http.post(format!("{driver_url}/session")).json(&body))
            .await
            .context("cannot start a WebDriver session")?;
        let id = value["sessionId"]
            .as_str()
            .ok_or_else(|| anyhow!("the driver's new session has no sessionId: {value}"))?;
        Ok(Session {
            url: format!("{driver_url}/session/{id}"),
            http,
        })
    }

    async fn get(&self, path: &str) -> Result<Value> {
        send(self.http.get(format!("{}{path}", self.url))).await
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value> {
        send(self.http.post(format!("{}{path}", self.url)).json(&body)).await
    }

    /// The window's title (the document's `<title>`, which Tauri also shows as window title).
    pub async fn title(&self) -> Result<String> {
        let value = self.get("/title").await?;
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("the title is not a string: {value}"))
    }

    /// The first element matching the CSS `selector`, now.
    pub async fn find(&self, selector: &str) -> Result<Element> {
        let value = self
            .post(
                "/element",
                json!({"using": "css selector", "value": selector}),
            )
            .await
            .with_context(|| format!("cannot find `{selector}`"))?;
        Element::from_reference(self, &value)
    }

    /// Every element matching the CSS `selector`, now (possibly none).
    pub async fn find_all(&self, selector: &str) -> Result<Vec<Element>> {
        let value = self
            .post(
                "/elements",
                json!({"using": "css selector", "value": selector}),
            )
            .await
            .with_context(|| format!("cannot look for `{selector}`"))?;
        value
            .as_array()
            .ok_or_else(|| anyhow!("find elements did not answer a list: {value}"))?
            .iter()
            .map(|reference| Element::from_reference(self, reference))
            .collect()
    }

    /// Waits up to `timeout` for an element matching `selector` to exist.
    pub async fn wait_for(&self, selector: &str, timeout: Duration) -> Result<Element> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.find_all(selector).await?.into_iter().next() {
                Some(element) => return Ok(element),
                None if Instant::now() >= deadline => {
                    bail!("`{selector}` did not appear within {timeout:?}")
                }
                None => tokio::time::sleep(POLL).await,
            }
        }
    }

    /// Waits up to `timeout` for an element matching `selector` whose text contains `text`.
    pub async fn wait_for_text(
        &self,
        selector: &str,
        text: &str,
        timeout: Duration,
    ) -> Result<Element> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            seen.clear();
            for element in self.find_all(selector).await? {
                // The page may re-render between finding and reading: a stale element is
                // simply not the one we wait for.
                if let Ok(current) = element.text().await {
                    if current.contains(text) {
                        return Ok(element);
                    }
                    seen.push(current);
                }
            }
            if Instant::now() >= deadline {
                bail!("no `{selector}` showed {text:?} within {timeout:?}; saw {seen:?}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Brings the window to the front with the keyboard focus, as the owner clicking it in the
    /// task bar: minimized, then given back its own size — the spec's "restore the window"
    /// step, which WebKitGTK does by presenting the window. (Switching to the window does not
    /// focus it, nor does `window.focus()`.) A window opened later, by another test, takes
    /// the focus, and without it WebKit matches no `:focus` at all.
    pub async fn focus_window(&self) -> Result<()> {
        let rect = self
            .get("/window/rect")
            .await
            .context("cannot read the window")?;
        self.post("/window/minimize", json!({}))
            .await
            .context("cannot minimize the window")?;
        self.post(
            "/window/rect",
            json!({"width": rect["width"], "height": rect["height"]}),
        )
        .await
        .context("cannot restore the window")?;
        Ok(())
    }

    /// Sets the window's outer size (the owner dragging its edge).
    pub async fn set_window_size(&self, width: u32, height: u32) -> Result<()> {
        self.post("/window/rect", json!({"width": width, "height": height}))
            .await
            .context("cannot resize the window")?;
        Ok(())
    }

    /// Types `keys` into whatever has focus, as a user at the keyboard would (key down/up per
    /// character; use the spec's code points such as `"\u{E007}"` for Enter).
    pub async fn press_keys(&self, keys: &str) -> Result<()> {
        let mut actions = Vec::new();
        for key in keys.chars() {
            actions.push(json!({"type": "keyDown", "value": key.to_string()}));
            actions.push(json!({"type": "keyUp", "value": key.to_string()}));
        }
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        )
        .await
        .with_context(|| format!("cannot press {keys:?}"))?;
        // Release everything so a failed step cannot leave a modifier held for the next one.
        send(self.http.delete(format!("{}/actions", self.url))).await?;
        Ok(())
    }

    /// Presses `key` with Shift held, as a user does for Shift+J: Shift goes down first and
    /// comes up last.
    pub async fn press_with_shift(&self, key: char) -> Result<()> {
        let actions = json!([
            {"type": "keyDown", "value": SHIFT},
            {"type": "keyDown", "value": key.to_string()},
            {"type": "keyUp", "value": key.to_string()},
            {"type": "keyUp", "value": SHIFT},
        ]);
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        )
        .await
        .with_context(|| format!("cannot press Shift+{key}"))?;
        send(self.http.delete(format!("{}/actions", self.url))).await?;
        Ok(())
    }

    /// Presses the chord `keys` (the spec's code points, e.g. Alt `"\u{E00A}"` then ArrowUp
    /// `"\u{E013}"`): each goes down in order and they come up in reverse, as a user holds a
    /// modifier.
    pub async fn press_chord(&self, keys: &[&str]) -> Result<()> {
        let mut actions: Vec<Value> = keys
            .iter()
            .map(|key| json!({"type": "keyDown", "value": key}))
            .collect();
        actions.extend(
            keys.iter()
                .rev()
                .map(|key| json!({"type": "keyUp", "value": key})),
        );
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        )
        .await
        .with_context(|| format!("cannot press the chord {keys:?}"))?;
        send(self.http.delete(format!("{}/actions", self.url))).await?;
        Ok(())
    }

    /// Runs `script` (a function body; `arguments[i]` are `args`) in the page and returns its
    /// result.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value> {
        self.post("/execute/sync", json!({"script": script, "args": args}))
            .await
            .context("cannot run a script in the page")
    }

    /// Runs asynchronous `script` in the page: it gets a callback as its last argument and
    /// its result is what it passes to it.
    pub async fn execute_async(&self, script: &str, args: Vec<Value>) -> Result<Value> {
        self.post("/execute/async", json!({"script": script, "args": args}))
            .await
            .context("cannot run an asynchronous script in the page")
    }

    /// Resolves once the page has painted what the DOM holds now. WebKit's screenshot is the
    /// last painted frame, which can lag a DOM change the test just waited for.
    pub async fn wait_for_paint(&self) -> Result<()> {
        self.execute_async(
            "const done = arguments[arguments.length - 1];
             requestAnimationFrame(() => requestAnimationFrame(() => done(null)));",
            vec![],
        )
        .await?;
        Ok(())
    }

    /// A PNG of the window's viewport, as painted after the DOM's latest change.
    pub async fn screenshot(&self) -> Result<Vec<u8>> {
        self.wait_for_paint().await?;
        let value = self.get("/screenshot").await?;
        let encoded = value
            .as_str()
            .ok_or_else(|| anyhow!("the screenshot is not a string"))?;
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .context("cannot decode the screenshot")
    }

    /// Saves a PNG of the window's viewport at `path`, creating its folder.
    pub async fn save_screenshot(&self, path: &Path) -> Result<()> {
        let png = self.screenshot().await?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(path, png).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Ends the session, which closes the app.
    pub async fn end(&self) -> Result<()> {
        send(self.http.delete(&self.url)).await?;
        Ok(())
    }
}

impl Element {
    fn from_reference(session: &Session, value: &Value) -> Result<Element> {
        let id = value[ELEMENT_KEY]
            .as_str()
            .ok_or_else(|| anyhow!("not an element reference: {value}"))?;
        Ok(Element {
            session: session.clone(),
            id: id.to_owned(),
        })
    }

    /// The element's rendered text (what a user reads).
    pub async fn text(&self) -> Result<String> {
        let value = self
            .session
            .get(&format!("/element/{}/text", self.id))
            .await?;
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("the element text is not a string: {value}"))
    }

    /// A PNG of the element's box as painted (a sandboxed frame's pixels, which no script can
    /// read), after the page's latest change.
    pub async fn screenshot(&self) -> Result<Vec<u8>> {
        self.session.wait_for_paint().await?;
        let value = self
            .session
            .get(&format!("/element/{}/screenshot", self.id))
            .await?;
        let encoded = value
            .as_str()
            .ok_or_else(|| anyhow!("the element screenshot is not a string"))?;
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .context("cannot decode the element screenshot")
    }

    /// The value of an attribute, if present (e.g. `aria-selected`).
    pub async fn attribute(&self, name: &str) -> Result<Option<String>> {
        let value = self
            .session
            .get(&format!("/element/{}/attribute/{name}", self.id))
            .await?;
        Ok(value.as_str().map(str::to_owned))
    }

    /// The element's accessible name, as the browser's accessibility tree computes it (what a
    /// screen reader announces).
    pub async fn computed_label(&self) -> Result<String> {
        let value = self
            .session
            .get(&format!("/element/{}/computedlabel", self.id))
            .await?;
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("the computed label is not a string: {value}"))
    }

    /// The element's role, as the browser's accessibility tree computes it.
    pub async fn computed_role(&self) -> Result<String> {
        let value = self
            .session
            .get(&format!("/element/{}/computedrole", self.id))
            .await?;
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("the computed role is not a string: {value}"))
    }

    /// Whether the element is enabled (a disabled button is not).
    pub async fn is_enabled(&self) -> Result<bool> {
        let value = self
            .session
            .get(&format!("/element/{}/enabled", self.id))
            .await?;
        value
            .as_bool()
            .ok_or_else(|| anyhow!("enabled is not a boolean: {value}"))
    }

    /// Clicks the element's centre.
    pub async fn click(&self) -> Result<()> {
        self.session
            .post(&format!("/element/{}/click", self.id), json!({}))
            .await?;
        Ok(())
    }

    /// Clicks the element's centre with Shift held (a range selection in a list): the key and
    /// the pointer act in the same ticks, Shift down before the click and up after it.
    pub async fn shift_click(&self) -> Result<()> {
        let origin = json!({ ELEMENT_KEY: self.id });
        let keys = json!([
            {"type": "keyDown", "value": SHIFT},
            {"type": "pause"},
            {"type": "pause"},
            {"type": "pause"},
            {"type": "keyUp", "value": SHIFT},
        ]);
        let pointer = json!([
            {"type": "pause"},
            {"type": "pointerMove", "origin": origin, "x": 0, "y": 0},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
            {"type": "pause"},
        ]);
        self.session
            .post(
                "/actions",
                json!({"actions": [
                    {"type": "key", "id": "keyboard", "actions": keys},
                    {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                     "actions": pointer},
                ]}),
            )
            .await
            .context("cannot shift+click")?;
        send(
            self.session
                .http
                .delete(format!("{}/actions", self.session.url)),
        )
        .await?;
        Ok(())
    }

    /// Focuses the element and types `text` into it.
    pub async fn send_keys(&self, text: &str) -> Result<()> {
        self.session
            .post(
                &format!("/element/{}/value", self.id),
                json!({"text": text}),
            )
            .await?;
        Ok(())
    }
}

/// Sends a WebDriver request and unwraps the spec's `{"value": …}` envelope, turning the spec's
/// error shape (`{"value": {"error", "message"}}`) into an error that says both.
async fn send(request: reqwest::RequestBuilder) -> Result<Value> {
    let response = request.send().await.context("cannot reach the WebDriver")?;
    let status = response.status();
    let body: Value = response
        .json()
        .await
        .with_context(|| format!("the WebDriver answered {status} without JSON"))?;
    let value = body.get("value").cloned().unwrap_or(Value::Null);
    if !status.is_success() {
        let error = value["error"].as_str().unwrap_or("unknown error");
        let message = value["message"].as_str().unwrap_or("");
        bail!("WebDriver {status}: {error}: {message}");
    }
    Ok(value)
}
