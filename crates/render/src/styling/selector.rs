//! Selectors, parsed and matched against the draft's own document: type, `*`, `#id`, `.class`,
//! attribute tests, the structural pseudo-classes, `:not()`, and the four combinators. What a
//! selector can only match on interaction (`:hover`) or that styles a pseudo-element is kept
//! apart; anything else is not evaluated.

use cssparser::{Parser, Token};

use crate::dom::{Dom, NodeData, NodeId};

/// A selector list entry, read.
#[derive(Debug, Clone)]
pub(crate) enum Selector {
    /// Matches elements in the page as it is first shown.
    Static(Complex),
    /// Matches only while the reader interacts (`:hover`, `:focus`, `:target`, …).
    Interactive(String),
    /// Styles a pseudo-element (`::before`, `::first-letter`) of the elements it matches.
    PseudoElement(Complex, String),
    /// Uses what Countersign does not evaluate (`:has()`, `:is()`, namespaces…).
    Unevaluated(String),
}

/// Compound selectors joined by combinators, the subject last.
#[derive(Debug, Clone)]
pub(crate) struct Complex {
    /// `(compound, combinator to the next one)`; the last one's combinator is unused.
    parts: Vec<(Compound, Combinator)>,
    /// The selector as written.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Combinator {
    Descendant,
    Child,
    NextSibling,
    LaterSibling,
}

#[derive(Debug, Clone, Default)]
struct Compound(Vec<Simple>);

#[derive(Debug, Clone)]
enum Simple {
    Tag(String),
    Id(String),
    Class(String),
    Attr {
        name: String,
        test: Option<(String, String, bool)>,
    },
    /// `:nth-child(a n + b)` and its relatives.
    Nth {
        a: i32,
        b: i32,
        of_type: bool,
        from_end: bool,
    },
    OnlyChild {
        of_type: bool,
    },
    Root,
    Empty,
    Link,
    Not(Vec<Compound>),
}

enum Step {
    Done(Compound),
    Interactive,
    /// The compound before the pseudo-element, and its name.
    PseudoElement(Compound, String),
}

/// Reads a selector list; one entry per selector.
pub(crate) fn parse_list(prelude: &str) -> Vec<Selector> {
    prelude
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_one)
        .collect()
}

fn parse_one(text: &str) -> Selector {
    let mut parser = Parser::new(text);
    let mut parts: Vec<(Compound, Combinator)> = Vec::new();
    let mut pending = Combinator::Descendant;
    loop {
        parser.skip_whitespace();
        if parser.is_exhausted() {
            break;
        }
        let state = parser.state();
        let combinator = match parser.next() {
            Ok(Token::Delim('>')) => Some(Combinator::Child),
            Ok(Token::Delim('+')) => Some(Combinator::NextSibling),
            Ok(Token::Delim('~')) => Some(Combinator::LaterSibling),
            _ => {
                parser.reset(&state);
                None
            }
        };
        if let Some(c) = combinator {
            if parts.is_empty() {
                return Selector::Unevaluated(text.to_owned());
            }
            pending = c;
            continue;
        }
        if let Some(last) = parts.last_mut() {
            last.1 = pending;
        }
        pending = Combinator::Descendant;
        match compound(&mut parser) {
            Some(Step::Done(c)) => parts.push((c, Combinator::Descendant)),
            Some(Step::Interactive) => return Selector::Interactive(text.to_owned()),
            Some(Step::PseudoElement(last, name)) => {
                parts.push((last, Combinator::Descendant));
                let complex = Complex {
                    parts,
                    text: text.to_owned(),
                };
                return Selector::PseudoElement(complex, name);
            }
            None => return Selector::Unevaluated(text.to_owned()),
        }
    }
    if parts.is_empty() {
        return Selector::Unevaluated(text.to_owned());
    }
    Selector::Static(Complex {
        parts,
        text: text.to_owned(),
    })
}

/// One compound selector, up to whitespace or a combinator.
fn compound(p: &mut Parser<'_>) -> Option<Step> {
    let mut simples = Vec::new();
    loop {
        let state = p.state();
        let Ok(token) = p.next_including_whitespace() else {
            break;
        };
        match token.clone() {
            Token::WhiteSpace(_) | Token::Delim('>' | '+' | '~') => {
                p.reset(&state);
                break;
            }
            Token::Ident(name) => simples.push(Simple::Tag(name.to_ascii_lowercase())),
            Token::Delim('*') => {}
            Token::IDHash(id) => simples.push(Simple::Id(id.to_string())),
            Token::Delim('.') => {
                let Ok(Token::Ident(class)) = p.next_including_whitespace().cloned() else {
                    return None;
                };
                simples.push(Simple::Class(class.to_string()));
            }
            Token::SquareBracketBlock => {
                let attr = p
                    .parse_nested_block(|inner| {
                        Ok::<_, cssparser::ParseError<()>>(attribute(inner))
                    })
                    .ok()??;
                simples.push(attr);
            }
            Token::Colon => {
                let next = p.next_including_whitespace().ok()?.clone();
                match next {
                    Token::Colon => {
                        let Token::Ident(name) = p.next_including_whitespace().ok()?.clone() else {
                            return None;
                        };
                        return Some(Step::PseudoElement(
                            Compound(simples),
                            name.to_ascii_lowercase(),
                        ));
                    }
                    Token::Ident(name) => match pseudo_class(&name.to_ascii_lowercase()) {
                        Pseudo::Simple(s) => simples.push(s),
                        Pseudo::Interactive => return Some(Step::Interactive),
                        Pseudo::Element => {
                            return Some(Step::PseudoElement(
                                Compound(simples),
                                name.to_ascii_lowercase(),
                            ))
                        }
                        Pseudo::Unknown => return None,
                    },
                    Token::Function(name) => {
                        let name = name.to_ascii_lowercase();
                        let simple = p
                            .parse_nested_block(|inner| {
                                Ok::<_, cssparser::ParseError<()>>(functional(&name, inner))
                            })
                            .ok()??;
                        simples.push(simple);
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some(Step::Done(Compound(simples)))
}

fn attribute(p: &mut Parser<'_>) -> Option<Simple> {
    let name = p.expect_ident().ok()?.to_ascii_lowercase();
    if p.is_exhausted() {
        return Some(Simple::Attr { name, test: None });
    }
    let op = match p.next().ok()?.clone() {
        Token::Delim('=') => "=".to_owned(),
        Token::IncludeMatch => "~=".to_owned(),
        Token::DashMatch => "|=".to_owned(),
        Token::PrefixMatch => "^=".to_owned(),
        Token::SuffixMatch => "$=".to_owned(),
        Token::SubstringMatch => "*=".to_owned(),
        _ => return None,
    };
    let value = p.expect_ident_or_string().ok()?.to_string();
    let insensitive = match p.next() {
        Ok(Token::Ident(flag)) if flag.eq_ignore_ascii_case("i") => true,
        Ok(Token::Ident(flag)) if flag.eq_ignore_ascii_case("s") => false,
        Ok(_) => return None,
        Err(_) => false,
    };
    Some(Simple::Attr {
        name,
        test: Some((op, value, insensitive)),
    })
}

enum Pseudo {
    Simple(Simple),
    Interactive,
    Element,
    Unknown,
}

fn pseudo_class(name: &str) -> Pseudo {
    let nth = |a, b, of_type, from_end| {
        Pseudo::Simple(Simple::Nth {
            a,
            b,
            of_type,
            from_end,
        })
    };
    match name {
        "first-child" => nth(0, 1, false, false),
        "last-child" => nth(0, 1, false, true),
        "first-of-type" => nth(0, 1, true, false),
        "last-of-type" => nth(0, 1, true, true),
        "only-child" => Pseudo::Simple(Simple::OnlyChild { of_type: false }),
        "only-of-type" => Pseudo::Simple(Simple::OnlyChild { of_type: true }),
        "root" => Pseudo::Simple(Simple::Root),
        "empty" => Pseudo::Simple(Simple::Empty),
        "link" | "any-link" => Pseudo::Simple(Simple::Link),
        "hover" | "focus" | "active" | "visited" | "target" | "focus-within" | "focus-visible"
        | "checked" => Pseudo::Interactive,
        // CSS 2's one-colon spelling of pseudo-elements.
        "before" | "after" | "first-line" | "first-letter" => Pseudo::Element,
        _ => Pseudo::Unknown,
    }
}

fn functional(name: &str, p: &mut Parser<'_>) -> Option<Simple> {
    let nth = |p: &mut Parser<'_>, of_type, from_end| {
        let (a, b) = cssparser::parse_nth(p).ok()?;
        p.is_exhausted().then_some(Simple::Nth {
            a,
            b,
            of_type,
            from_end,
        })
    };
    match name {
        "nth-child" => nth(p, false, false),
        "nth-last-child" => nth(p, false, true),
        "nth-of-type" => nth(p, true, false),
        "nth-last-of-type" => nth(p, true, true),
        "not" => {
            let start = p.position();
            while p.next_including_whitespace().is_ok() {}
            let inner = p.slice_from(start).to_owned();
            let mut compounds = Vec::new();
            for one in inner.split(',') {
                let mut parser = Parser::new(one.trim());
                match compound(&mut parser)? {
                    Step::Done(c) if parser.is_exhausted() => compounds.push(c),
                    _ => return None,
                }
            }
            Some(Simple::Not(compounds))
        }
        _ => None,
    }
}

impl Complex {
    /// CSS specificity: (ids, classes + attributes + pseudo-classes, types).
    pub fn specificity(&self) -> (usize, usize, usize) {
        let mut s = (0, 0, 0);
        for (compound, _) in &self.parts {
            compound.add_specificity(&mut s);
        }
        s
    }

    /// Whether element `id` of `dom` matches.
    pub fn matches(&self, dom: &Dom, id: NodeId) -> bool {
        match self.parts.split_last() {
            Some(((subject, _), rest)) => subject.matches(dom, id) && matches_left(rest, dom, id),
            None => false,
        }
    }
}

/// Whether the compounds left of an already matched element `id` match around it.
fn matches_left(rest: &[(Compound, Combinator)], dom: &Dom, id: NodeId) -> bool {
    let Some(((compound, combinator), left)) = rest.split_last() else {
        return true;
    };
    let try_at =
        |candidate: NodeId| compound.matches(dom, candidate) && matches_left(left, dom, candidate);
    match combinator {
        Combinator::Child => parent_element(dom, id).is_some_and(try_at),
        Combinator::Descendant => {
            let mut at = parent_element(dom, id);
            while let Some(ancestor) = at {
                if try_at(ancestor) {
                    return true;
                }
                at = parent_element(dom, ancestor);
            }
            false
        }
        Combinator::NextSibling => previous_elements(dom, id).next().is_some_and(try_at),
        Combinator::LaterSibling => previous_elements(dom, id).any(try_at),
    }
}

fn parent_element(dom: &Dom, id: NodeId) -> Option<NodeId> {
    dom.nodes[id].parent.filter(|&p| dom.tag(p).is_some())
}

fn element_siblings(dom: &Dom, id: NodeId) -> Vec<NodeId> {
    match dom.nodes[id].parent {
        Some(parent) => dom.nodes[parent]
            .children
            .iter()
            .copied()
            .filter(|&c| dom.tag(c).is_some())
            .collect(),
        None => vec![id],
    }
}

fn previous_elements(dom: &Dom, id: NodeId) -> impl Iterator<Item = NodeId> {
    let siblings = element_siblings(dom, id);
    let at = siblings.iter().position(|&s| s == id).unwrap_or(0);
    siblings.into_iter().take(at).rev()
}

impl Compound {
    fn add_specificity(&self, s: &mut (usize, usize, usize)) {
        for simple in &self.0 {
            match simple {
                Simple::Id(_) => s.0 += 1,
                Simple::Tag(_) => s.2 += 1,
                Simple::Not(inner) => {
                    // The most specific argument counts.
                    let best = inner
                        .iter()
                        .map(|c| {
                            let mut t = (0, 0, 0);
                            c.add_specificity(&mut t);
                            t
                        })
                        .max()
                        .unwrap_or_default();
                    *s = (s.0 + best.0, s.1 + best.1, s.2 + best.2);
                }
                _ => s.1 += 1,
            }
        }
    }

    fn matches(&self, dom: &Dom, id: NodeId) -> bool {
        if !dom.may_match() {
            return false;
        }
        let Some(tag) = dom.tag(id) else {
            return false;
        };
        self.0.iter().all(|simple| match simple {
            Simple::Tag(t) => t == tag,
            Simple::Id(want) => dom.attr(id, "id") == Some(want.as_str()),
            Simple::Class(want) => dom
                .attr(id, "class")
                .is_some_and(|c| c.split_ascii_whitespace().any(|c| c == want)),
            Simple::Attr { name, test } => match (dom.attr(id, name), test) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(have), Some((op, want, insensitive))) => {
                    let (have, want) = if *insensitive {
                        (have.to_lowercase(), want.to_lowercase())
                    } else {
                        (have.to_owned(), want.clone())
                    };
                    match op.as_str() {
                        "=" => have == want,
                        "~=" => have.split_ascii_whitespace().any(|w| w == want),
                        "|=" => have == want || have.starts_with(&format!("{want}-")),
                        "^=" => !want.is_empty() && have.starts_with(&want),
                        "$=" => !want.is_empty() && have.ends_with(&want),
                        _ => !want.is_empty() && have.contains(&want),
                    }
                }
            },
            Simple::Nth {
                a,
                b,
                of_type,
                from_end,
            } => {
                let mut siblings = element_siblings(dom, id);
                if *of_type {
                    siblings.retain(|&s| dom.tag(s) == Some(tag));
                }
                if *from_end {
                    siblings.reverse();
                }
                let index = siblings.iter().position(|&s| s == id).unwrap_or(0) as i32 + 1;
                nth_holds(*a, *b, index)
            }
            Simple::OnlyChild { of_type } => {
                let siblings = element_siblings(dom, id);
                siblings
                    .iter()
                    .filter(|&&s| !*of_type || dom.tag(s) == Some(tag))
                    .count()
                    == 1
            }
            Simple::Root => tag == "html",
            Simple::Empty => dom.nodes[id]
                .children
                .iter()
                .all(|&c| match &dom.nodes[c].data {
                    NodeData::Text(t) => t.is_empty(),
                    NodeData::Element { .. } => false,
                    _ => true,
                }),
            Simple::Link => matches!(tag, "a" | "area") && dom.attr(id, "href").is_some(),
            Simple::Not(inner) => !inner.iter().any(|c| c.matches(dom, id)),
        })
    }
}

/// Whether `index` (1-based) is `a n + b` for some n ≥ 0.
fn nth_holds(a: i32, b: i32, index: i32) -> bool {
    if a == 0 {
        return index == b;
    }
    let diff = index - b;
    diff % a == 0 && diff / a >= 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matching(selector: &str, html: &str) -> Vec<String> {
        let dom = Dom::parse(html);
        let Selector::Static(complex) = &parse_list(selector)[0] else {
            panic!("{selector} not static");
        };
        (0..dom.nodes.len())
            .filter(|&id| complex.matches(&dom, id))
            .filter_map(|id| dom.attr(id, "id").map(str::to_owned))
            .collect()
    }

    #[test]
    fn combinators_attributes_and_structure_match_as_in_browsers() {
        let html =
            "<div id=a class=box><p id=b>x</p><p id=c data-k=\"v w\">y</p><span id=d></span></div>";
        assert_eq!(matching("div > p", html), ["b", "c"]);
        assert_eq!(matching(".box p + p", html), ["c"]);
        assert_eq!(matching("p ~ span", html), ["d"]);
        assert_eq!(matching("[data-k~=w]", html), ["c"]);
        assert_eq!(matching("p:nth-child(2n+1)", html), ["b"]);
        assert_eq!(matching("p:last-of-type", html), ["c"]);
        assert_eq!(matching("div :not(p)", html), ["d"]);
        assert_eq!(matching("span:empty", html), ["d"]);
        assert_eq!(
            parse_list("#x .y")[0].clone().specificity_of_static(),
            Some((1, 1, 0))
        );
    }

    #[test]
    fn interaction_pseudo_elements_and_the_unknown_are_told_apart() {
        assert!(matches!(parse_list("a:hover")[0], Selector::Interactive(_)));
        assert!(matches!(
            parse_list("p.x::before")[0],
            Selector::PseudoElement(_, ref n) if n == "before"
        ));
        assert!(matches!(
            parse_list("p:has(b)")[0],
            Selector::Unevaluated(_)
        ));
        assert!(matches!(parse_list("svg|a")[0], Selector::Unevaluated(_)));
    }

    impl Selector {
        fn specificity_of_static(self) -> Option<(usize, usize, usize)> {
            match self {
                Selector::Static(c) => Some(c.specificity()),
                _ => None,
            }
        }
    }
}
