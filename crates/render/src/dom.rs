//! A parsed HTML document as a flat arena of nodes, built by html5ever (the parser ammonia
//! uses), for reading a draft's HTML as a browser would before sanitizing changes it.
//!
//! An arena rather than a tree of reference-counted nodes: a hostile draft may nest tens of
//! thousands of elements, and both walking and dropping such a tree must not recurse.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::TreeBuilderOpts;
use html5ever::{parse_document, Attribute, LocalName, ParseOpts, QualName};

/// Index of a node in [`Dom::nodes`].
pub(crate) type NodeId = usize;

/// What a node is.
pub(crate) enum NodeData {
    Document,
    Element {
        name: QualName,
        attrs: Vec<Attribute>,
    },
    Text(String),
    /// A comment: never shown, yet read by whatever reads the HTML (and by Outlook, when it
    /// is a conditional comment).
    Comment(String),
    /// Doctypes, processing instructions, template contents: never shown.
    Other,
}

/// One node of the document.
pub(crate) struct Node {
    pub parent: Option<NodeId>,
    pub children: Vec<NodeId>,
    pub data: NodeData,
}

/// A parsed document; node 0 is the document itself.
pub(crate) struct Dom {
    pub nodes: Vec<Node>,
    /// `(template element, its detached contents)`: never shown, in the document all the same.
    pub templates: Vec<(NodeId, NodeId)>,
    /// Compound selectors tried against this document so far (see [`MATCH_BUDGET`]).
    pub match_steps: std::cell::Cell<u64>,
}

/// The most compound-selector tests one document gets: a hostile sheet (thousands of rules
/// whose descendant selectors walk every ancestor of every element) must not stall the review.
/// Past it nothing more matches, and the styling is reported as not evaluated.
pub(crate) const MATCH_BUDGET: u64 = 20_000_000;

impl Dom {
    /// Counts one compound-selector test; false once the document's budget is spent.
    pub fn may_match(&self) -> bool {
        let steps = self.match_steps.get() + 1;
        self.match_steps.set(steps);
        steps <= MATCH_BUDGET
    }

    /// Whether selector matching stopped at the budget.
    pub fn matching_was_cut(&self) -> bool {
        self.match_steps.get() > MATCH_BUDGET
    }

    /// Parses `html` the way a browser with scripting off (a mail program) does.
    pub fn parse(html: &str) -> Dom {
        let opts = ParseOpts {
            tree_builder: TreeBuilderOpts {
                // Mail programs run no scripts, so <noscript> content is markup they show.
                scripting_enabled: false,
                ..TreeBuilderOpts::default()
            },
            ..ParseOpts::default()
        };
        parse_document(Builder::new(), opts).one(html)
    }

    /// The lower-case local name of element `id`.
    pub fn tag(&self, id: NodeId) -> Option<&str> {
        match &self.nodes[id].data {
            NodeData::Element { name, .. } => Some(&*name.local),
            _ => None,
        }
    }

    /// The value of attribute `attr` (lower-case) of element `id`.
    pub fn attr(&self, id: NodeId, attr: &str) -> Option<&str> {
        match &self.nodes[id].data {
            NodeData::Element { attrs, .. } => attrs
                .iter()
                .find(|a| a.name.ns == html5ever::ns!() && &*a.name.local == attr)
                .map(|a| &*a.value),
            _ => None,
        }
    }
}

/// A node's handle during parsing: its index, and its name where the parser can read it
/// without borrowing the arena (the parser asks for names all the time).
struct Entry {
    id: NodeId,
    name: QualName,
}

type Handle = Rc<Entry>;

struct Builder {
    nodes: RefCell<Vec<Node>>,
    document: Handle,
    /// Template contents per template element: a detached node, so their text is never read.
    templates: RefCell<Vec<(NodeId, Handle)>>,
}

fn no_name() -> QualName {
    QualName::new(None, html5ever::ns!(), LocalName::from(""))
}

impl Builder {
    fn new() -> Self {
        Builder {
            nodes: RefCell::new(vec![Node {
                parent: None,
                children: Vec::new(),
                data: NodeData::Document,
            }]),
            document: Rc::new(Entry {
                id: 0,
                name: no_name(),
            }),
            templates: RefCell::new(Vec::new()),
        }
    }

    fn push(&self, data: NodeData) -> Handle {
        let name = match &data {
            NodeData::Element { name, .. } => name.clone(),
            _ => no_name(),
        };
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(Node {
            parent: None,
            children: Vec::new(),
            data,
        });
        Rc::new(Entry {
            id: nodes.len() - 1,
            name,
        })
    }

    fn detach(nodes: &mut [Node], target: NodeId) {
        if let Some(parent) = nodes[target].parent.take() {
            nodes[parent].children.retain(|&c| c != target);
        }
    }

    /// Inserts `child` into `parent` at `index` (the end when `None`), merging adjacent text.
    fn insert(&self, parent: NodeId, index: Option<usize>, child: NodeOrText<Handle>) {
        let mut nodes = self.nodes.borrow_mut();
        let at = index.unwrap_or(nodes[parent].children.len());
        match child {
            NodeOrText::AppendText(text) => {
                let before = at
                    .checked_sub(1)
                    .and_then(|i| nodes[parent].children.get(i).copied());
                if let Some(before) = before {
                    if let NodeData::Text(existing) = &mut nodes[before].data {
                        existing.push_str(&text);
                        return;
                    }
                }
                nodes.push(Node {
                    parent: Some(parent),
                    children: Vec::new(),
                    data: NodeData::Text((*text).to_owned()),
                });
                let id = nodes.len() - 1;
                nodes[parent].children.insert(at, id);
            }
            NodeOrText::AppendNode(node) => {
                Self::detach(&mut nodes, node.id);
                let at = at.min(nodes[parent].children.len());
                nodes[node.id].parent = Some(parent);
                nodes[parent].children.insert(at, node.id);
            }
        }
    }
}

impl TreeSink for Builder {
    type Handle = Handle;
    type Output = Dom;
    type ElemName<'a>
        = &'a QualName
    where
        Self: 'a;

    fn finish(self) -> Dom {
        Dom {
            match_steps: std::cell::Cell::new(0),
            nodes: self.nodes.into_inner(),
            templates: self
                .templates
                .into_inner()
                .into_iter()
                .map(|(template, contents)| (template, contents.id))
                .collect(),
        }
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> Handle {
        Rc::clone(&self.document)
    }

    fn elem_name<'a>(&'a self, target: &'a Handle) -> &'a QualName {
        &target.name
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        let handle = self.push(NodeData::Element { name, attrs });
        if flags.template {
            let contents = self.push(NodeData::Other);
            self.templates.borrow_mut().push((handle.id, contents));
        }
        handle
    }

    fn create_comment(&self, text: StrTendril) -> Handle {
        self.push(NodeData::Comment(text.to_string()))
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> Handle {
        self.push(NodeData::Other)
    }

    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        self.insert(parent.id, None, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        let has_parent = self.nodes.borrow()[element.id].parent.is_some();
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {}

    fn get_template_contents(&self, target: &Handle) -> Handle {
        let found = self
            .templates
            .borrow()
            .iter()
            .find(|(t, _)| *t == target.id)
            .map(|(_, c)| Rc::clone(c));
        found.unwrap_or_else(|| {
            let contents = self.push(NodeData::Other);
            self.templates
                .borrow_mut()
                .push((target.id, Rc::clone(&contents)));
            contents
        })
    }

    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        x.id == y.id
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        let place = {
            let nodes = self.nodes.borrow();
            nodes[sibling.id].parent.map(|p| {
                let index = nodes[p].children.iter().position(|&c| c == sibling.id);
                (p, index)
            })
        };
        if let Some((parent, index)) = place {
            self.insert(parent, index, new_node);
        }
    }

    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        if let NodeData::Element {
            attrs: existing, ..
        } = &mut self.nodes.borrow_mut()[target.id].data
        {
            for a in attrs {
                if !existing.iter().any(|e| e.name == a.name) {
                    existing.push(a);
                }
            }
        }
    }

    fn remove_from_parent(&self, target: &Handle) {
        Self::detach(&mut self.nodes.borrow_mut(), target.id);
    }

    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        let mut nodes = self.nodes.borrow_mut();
        let children = std::mem::take(&mut nodes[node.id].children);
        for &c in &children {
            nodes[c].parent = Some(new_parent.id);
        }
        nodes[new_parent.id].children.extend(children);
    }
}

/// Elements with no end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Whether `tag` is an element with no end tag.
pub(crate) fn is_void(tag: &str) -> bool {
    VOID.contains(&tag)
}

impl Dom {
    /// The text nodes under `id` (itself included), in document order, not looking inside
    /// elements whose tag `skip` names.
    pub fn texts_under(&self, id: NodeId, skip: impl Fn(&str) -> bool) -> Vec<&str> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(at) = stack.pop() {
            match &self.nodes[at].data {
                NodeData::Text(t) => out.push(t.as_str()),
                NodeData::Element { .. } if self.tag(at).is_some_and(&skip) => {}
                _ => stack.extend(self.nodes[at].children.iter().rev()),
            }
        }
        out
    }

    /// Sets attribute `attr` (lower-case, no namespace) of element `id` to `value`.
    pub fn set_attr(&mut self, id: NodeId, attr: &str, value: String) {
        if let NodeData::Element { attrs, .. } = &mut self.nodes[id].data {
            match attrs
                .iter_mut()
                .find(|a| a.name.ns == html5ever::ns!() && &*a.name.local == attr)
            {
                Some(a) => a.value = value.into(),
                None => attrs.push(Attribute {
                    name: QualName::new(None, html5ever::ns!(), LocalName::from(attr)),
                    value: value.into(),
                }),
            }
        }
    }

    /// The document as HTML again (for the sanitizer, which parses it anew). Comments and
    /// template contents are left out; raw-text elements keep their text unescaped.
    pub fn to_html(&self) -> String {
        enum Step {
            Open(NodeId),
            Close(NodeId),
        }
        let escape = |s: &str, attribute: bool| {
            let mut out = String::with_capacity(s.len());
            for c in s.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '\u{a0}' => out.push_str("&nbsp;"),
                    '"' if attribute => out.push_str("&quot;"),
                    '<' if !attribute => out.push_str("&lt;"),
                    '>' if !attribute => out.push_str("&gt;"),
                    c => out.push(c),
                }
            }
            out
        };
        let mut out = String::new();
        let mut stack: Vec<Step> = self.nodes[0]
            .children
            .iter()
            .rev()
            .map(|&c| Step::Open(c))
            .collect();
        while let Some(step) = stack.pop() {
            match step {
                Step::Close(id) => {
                    if let Some(tag) = self.tag(id) {
                        out.push_str("</");
                        out.push_str(tag);
                        out.push('>');
                    }
                }
                Step::Open(id) => match &self.nodes[id].data {
                    NodeData::Text(text) => {
                        let raw =
                            self.nodes[id]
                                .parent
                                .and_then(|p| self.tag(p))
                                .is_some_and(|t| {
                                    matches!(
                                        t,
                                        "style"
                                            | "script"
                                            | "xmp"
                                            | "iframe"
                                            | "noembed"
                                            | "noframes"
                                            | "plaintext"
                                    )
                                });
                        if raw {
                            out.push_str(text);
                        } else {
                            out.push_str(&escape(text, false));
                        }
                    }
                    NodeData::Element { name, attrs } => {
                        let tag = &*name.local;
                        out.push('<');
                        out.push_str(tag);
                        for a in attrs {
                            out.push(' ');
                            if let Some(prefix) = &a.name.prefix {
                                out.push_str(prefix);
                                out.push(':');
                            }
                            out.push_str(&a.name.local);
                            out.push_str("=\"");
                            out.push_str(&escape(&a.value, true));
                            out.push('"');
                        }
                        out.push('>');
                        if !is_void(tag) {
                            stack.push(Step::Close(id));
                            stack.extend(
                                self.nodes[id].children.iter().rev().map(|&c| Step::Open(c)),
                            );
                        }
                    }
                    _ => {}
                },
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(dom: &Dom) -> String {
        let mut out = String::new();
        let mut stack = vec![0];
        while let Some(id) = stack.pop() {
            if let NodeData::Text(t) = &dom.nodes[id].data {
                out.push_str(t);
            }
            stack.extend(dom.nodes[id].children.iter().rev());
        }
        out
    }

    #[test]
    fn misnested_markup_is_repaired_as_a_browser_does() {
        let dom = Dom::parse("<p>a<b>b<p>c</b>d</p>");
        assert_eq!(text_of(&dom), "abcd");
        let p: Vec<NodeId> = (0..dom.nodes.len())
            .filter(|&i| dom.tag(i) == Some("p"))
            .collect();
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn very_deep_nesting_parses_and_drops_without_recursion() {
        let html = "<div>".repeat(10_000) + "deep";
        let dom = Dom::parse(&html);
        assert_eq!(text_of(&dom), "deep");
    }
}
