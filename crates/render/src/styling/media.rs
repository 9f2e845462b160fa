//! Media conditions, evaluated for the two screens recipients read mail on: a desktop window
//! (1024 px wide) and a phone (375 px). A rule under a condition that depends on anything else
//! (resolution, hover, `@supports`) may apply to some recipients: it is not evaluated.

/// The width of a desktop mail program's message pane, in CSS px.
pub(crate) const DESKTOP_WIDTH: f32 = 1024.0;
/// The width of a phone's screen, in CSS px.
pub(crate) const PHONE_WIDTH: f32 = 375.0;

/// Where a rule applies.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Condition {
    /// Everywhere.
    Always,
    /// On the screens where it holds.
    Viewports { desktop: bool, phone: bool },
    /// In dark mode only: colours change there, which recipients see in both light and dark.
    DarkScheme,
    /// Under a condition Countersign does not evaluate (named as written).
    Unknown(String),
}

impl Condition {
    /// Both conditions at once.
    pub fn and(&self, other: &Condition) -> Condition {
        match (self, other) {
            (Condition::Unknown(a), _) => Condition::Unknown(a.clone()),
            (_, Condition::Unknown(b)) => Condition::Unknown(b.clone()),
            (Condition::Always, c) | (c, Condition::Always) => c.clone(),
            (Condition::DarkScheme, _) | (_, Condition::DarkScheme) => Condition::DarkScheme,
            (
                Condition::Viewports { desktop, phone },
                Condition::Viewports {
                    desktop: d2,
                    phone: p2,
                },
            ) => Condition::Viewports {
                desktop: *desktop && *d2,
                phone: *phone && *p2,
            },
        }
    }

    /// Whether a rule under this condition applies on a screen `width` px wide (light mode).
    pub fn applies_at(&self, width: f32) -> bool {
        match self {
            Condition::Always => true,
            Condition::Viewports { desktop, phone } => {
                if width >= DESKTOP_WIDTH {
                    *desktop
                } else {
                    *phone
                }
            }
            Condition::DarkScheme | Condition::Unknown(_) => false,
        }
    }
}

/// Evaluates a media query list (`screen and (max-width: 600px), print`).
pub(crate) fn evaluate(prelude: &str) -> Condition {
    let mut desktop = false;
    let mut phone = false;
    for query in prelude.split(',') {
        match query_at(query) {
            Some(Query::Widths(d, p)) => {
                desktop |= d;
                phone |= p;
            }
            Some(Query::Dark) => return Condition::DarkScheme,
            None => return Condition::Unknown(format!("@media {}", prelude.trim())),
        }
    }
    Condition::Viewports { desktop, phone }
}

enum Query {
    Widths(bool, bool),
    Dark,
}

/// One query, for the desktop and the phone; `None` when it tests what is not evaluated.
fn query_at(query: &str) -> Option<Query> {
    let lower = query.trim().to_ascii_lowercase();
    let (negated, rest) = match lower.strip_prefix("not ") {
        Some(rest) => (true, rest.trim()),
        None => (false, lower.strip_prefix("only ").unwrap_or(&lower).trim()),
    };
    let mut desktop = true;
    let mut phone = true;
    for term in rest.split(" and ") {
        let term = term.trim();
        match term {
            "" | "all" | "screen" => {}
            "print" | "speech" | "tv" | "handheld" | "projection" => {
                desktop = false;
                phone = false;
            }
            _ => {
                let inner = term.strip_prefix('(')?.strip_suffix(')')?;
                let (feature, value) = match inner.split_once(':') {
                    Some((f, v)) => (f.trim(), v.trim()),
                    None => (inner.trim(), ""),
                };
                if feature == "prefers-color-scheme" {
                    return match value {
                        "dark" if !negated => Some(Query::Dark),
                        "light" => Some(Query::Widths(!negated, !negated)),
                        _ => None,
                    };
                }
                let holds = |width: f32| -> Option<bool> {
                    let px = crate::styling::values::length_px(value)?;
                    Some(match feature {
                        "max-width" | "max-device-width" => width <= px,
                        "min-width" | "min-device-width" => width >= px,
                        "width" | "device-width" => (width - px).abs() < 0.5,
                        _ => return None,
                    })
                };
                desktop &= holds(DESKTOP_WIDTH)?;
                phone &= holds(PHONE_WIDTH)?;
            }
        }
    }
    if negated {
        Some(Query::Widths(!desktop, !phone))
    } else {
        Some(Query::Widths(desktop, phone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_evaluated_for_a_desktop_and_a_phone() {
        assert_eq!(
            evaluate("only screen and (max-width: 600px)"),
            Condition::Viewports {
                desktop: false,
                phone: true
            }
        );
        assert_eq!(
            evaluate("screen and (min-width:601px)"),
            Condition::Viewports {
                desktop: true,
                phone: false
            }
        );
        assert_eq!(
            evaluate("print"),
            Condition::Viewports {
                desktop: false,
                phone: false
            }
        );
        assert_eq!(
            evaluate("(prefers-color-scheme: dark)"),
            Condition::DarkScheme
        );
        assert!(matches!(
            evaluate("(-webkit-min-device-pixel-ratio: 2)"),
            Condition::Unknown(_)
        ));
        assert!(matches!(evaluate("(hover: hover)"), Condition::Unknown(_)));
    }
}
