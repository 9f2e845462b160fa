//! A `<style>` sheet read with a real CSS parser (`cssparser`, the tokenizer and rule grammar
//! of Servo and Firefox): style rules with their selector text, declarations and the media
//! condition they sit under, and everything else a sheet can hold that Countersign cannot
//! vouch for (web fonts, imports, unknown at-rules, nested rules).

use cssparser::{
    AtRuleParser, CowRcStr, DeclarationParser, ParseError, Parser, ParserState,
    QualifiedRuleParser, RuleBodyItemParser, RuleBodyParser, StyleSheetParser, Token,
};

use super::media::{self, Condition};

/// One `property: value` pair, as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Declaration {
    /// Lower-case property name.
    pub property: String,
    /// The value as browsers read it: comments removed, `!important` removed, trimmed.
    pub value: String,
    /// The whole declaration as written, name included (comments and escapes kept): the
    /// review's sanitizer drops a declaration whose text holds a comment or an escape.
    pub raw: String,
    pub important: bool,
    /// Lower-case names of every function in the value, nested ones included (`calc`, `var`).
    pub functions: Vec<String>,
}

/// One style rule of a sheet.
#[derive(Debug, Clone)]
pub(crate) struct StyleRule {
    /// The selector list as written.
    pub prelude: String,
    /// Where it applies.
    pub condition: Condition,
    pub declarations: Vec<Declaration>,
}

/// A sheet: its style rules, and what in it Countersign cannot evaluate.
#[derive(Debug, Default)]
pub(crate) struct Sheet {
    pub rules: Vec<StyleRule>,
    /// One sentence per construct that may change what recipients see, unevaluated.
    pub unverifiable: Vec<String>,
}

/// At most 60 characters of `value`, for a sentence.
fn short(value: &str) -> String {
    crate::text::excerpt(value.trim(), 60)
}

/// Reads a whole sheet (the text of every `<style>` element, joined).
pub(crate) fn parse_sheet(css: &str) -> Sheet {
    let mut parser = Parser::new(css);
    let mut sheet = Sheet::default();
    read_rules(&mut parser, &Condition::Always, &mut sheet);
    sheet
}

/// Reads an inline `style` attribute's declarations.
pub(crate) fn parse_inline(css: &str) -> Vec<Declaration> {
    let mut parser = Parser::new(css);
    let mut sheet = Sheet::default();
    read_body(&mut parser, &mut sheet)
}

fn read_rules(parser: &mut Parser<'_>, condition: &Condition, sheet: &mut Sheet) {
    let mut rules = Rules { condition, sheet };
    // Invalid rules are skipped, as browsers skip them.
    for _ in StyleSheetParser::new(parser, &mut rules) {}
}

fn read_body(parser: &mut Parser<'_>, sheet: &mut Sheet) -> Vec<Declaration> {
    let mut body = Body {
        declarations: Vec::new(),
        sheet,
    };
    for _ in RuleBodyParser::new(parser, &mut body) {}
    body.declarations
}

/// Every token of a value to its end, with the names of the functions in it.
fn read_value<'i>(input: &mut Parser<'i>, functions: &mut Vec<String>) {
    while let Ok(token) = input.next_including_whitespace() {
        let nested = match token {
            Token::Function(name) => {
                functions.push(name.to_ascii_lowercase());
                true
            }
            Token::ParenthesisBlock | Token::SquareBracketBlock | Token::CurlyBracketBlock => true,
            _ => false,
        };
        if nested {
            let _ = input.parse_nested_block(|inner| {
                read_value(inner, functions);
                Ok::<(), ParseError<()>>(())
            });
        }
    }
}

struct Rules<'s> {
    condition: &'s Condition,
    sheet: &'s mut Sheet,
}

impl<'i> QualifiedRuleParser<'i> for Rules<'_> {
    type Prelude = String;
    type QualifiedRule = ();
    type Error = ();

    fn parse_prelude(&mut self, input: &mut Parser<'i>) -> Result<String, ParseError<()>> {
        let start = input.position();
        read_value(input, &mut Vec::new());
        Ok(input.slice_from(start).trim().to_owned())
    }

    fn parse_block(
        &mut self,
        prelude: String,
        _start: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<(), ParseError<()>> {
        let declarations = read_body(input, self.sheet);
        self.sheet.rules.push(StyleRule {
            prelude,
            condition: self.condition.clone(),
            declarations,
        });
        Ok(())
    }
}

impl<'i> AtRuleParser<'i> for Rules<'_> {
    type Prelude = (String, String);
    type AtRule = ();
    type Error = ();

    fn parse_prelude(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
    ) -> Result<(String, String), ParseError<()>> {
        let start = input.position();
        read_value(input, &mut Vec::new());
        Ok((
            name.to_ascii_lowercase(),
            input.slice_from(start).trim().to_owned(),
        ))
    }

    fn rule_without_block(
        &mut self,
        (name, prelude): (String, String),
        _start: &ParserState,
    ) -> Result<(), ()> {
        match name.as_str() {
            "charset" | "namespace" => {}
            // A sheet fetched from elsewhere: recipients' programs that load it apply rules
            // no one has seen.
            "import" => self.sheet.unverifiable.push(format!(
                "@import {prelude} loads style rules from elsewhere"
            )),
            _ => self
                .sheet
                .unverifiable
                .push(format!("an unknown at-rule @{name} {prelude}")),
        }
        Ok(())
    }

    fn parse_block(
        &mut self,
        (name, prelude): (String, String),
        _start: &ParserState,
        input: &mut Parser<'i>,
    ) -> Result<(), ParseError<()>> {
        match name.as_str() {
            "media" => {
                let condition = self.condition.and(&media::evaluate(&prelude));
                read_rules(input, &condition, self.sheet);
            }
            "supports" | "container" | "layer" | "scope" | "document" | "-moz-document" => {
                let condition = self
                    .condition
                    .and(&Condition::Unknown(format!("@{name} {prelude}")));
                read_rules(input, &condition, self.sheet);
            }
            "font-face" => {
                let declarations = read_body(input, self.sheet);
                // Outlook declares the fonts it uses by name only (no `src`): harmless. A
                // downloaded font can draw any letter as any shape, or as nothing.
                if let Some(src) = declarations.iter().find(|d| d.property == "src") {
                    self.sheet.unverifiable.push(format!(
                        "@font-face loads a font ({}) that can draw letters as other shapes or \
                         as nothing",
                        short(&src.value)
                    ));
                }
            }
            // Page boxes for printing, Outlook's list definitions, animation keyframes (an
            // animation is only run through the `animation` property, judged on its own).
            "page"
            | "list"
            | "keyframes"
            | "-webkit-keyframes"
            | "font-feature-values"
            | "counter-style"
            | "viewport"
            | "-ms-viewport" => {}
            _ => self
                .sheet
                .unverifiable
                .push(format!("an unknown at-rule @{name} {prelude}")),
        }
        Ok(())
    }
}

struct Body<'s> {
    declarations: Vec<Declaration>,
    sheet: &'s mut Sheet,
}

impl<'i> DeclarationParser<'i> for Body<'_> {
    type Declaration = ();
    type Error = ();

    fn parse_value(
        &mut self,
        name: CowRcStr<'i>,
        input: &mut Parser<'i>,
        declaration_start: &ParserState,
    ) -> Result<(), ParseError<()>> {
        let start = input.position();
        let mut functions = Vec::new();
        read_value(input, &mut functions);
        let raw = input.slice_from(start).trim();
        let (value, important) = match raw.rfind('!') {
            Some(bang) if raw[bang + 1..].trim().eq_ignore_ascii_case("important") => {
                (raw[..bang].trim_end(), true)
            }
            _ => (raw, false),
        };
        self.declarations.push(Declaration {
            property: name.to_ascii_lowercase(),
            value: crate::styling::values::strip_comments(value)
                .trim()
                .to_owned(),
            raw: input.slice_from(declaration_start.position()).to_owned(),
            important,
            functions,
        });
        Ok(())
    }
}

impl<'i> AtRuleParser<'i> for Body<'_> {
    type Prelude = ();
    type AtRule = ();
    type Error = ();
}

impl<'i> QualifiedRuleParser<'i> for Body<'_> {
    type Prelude = String;
    type QualifiedRule = ();
    type Error = ();

    fn parse_prelude(&mut self, input: &mut Parser<'i>) -> Result<String, ParseError<()>> {
        let start = input.position();
        read_value(input, &mut Vec::new());
        Ok(input.slice_from(start).trim().to_owned())
    }

    fn parse_block(
        &mut self,
        prelude: String,
        _start: &ParserState,
        _input: &mut Parser<'i>,
    ) -> Result<(), ParseError<()>> {
        // CSS nesting: browsers that support it apply the inner rule.
        self.sheet.unverifiable.push(format!(
            "a nested rule ({}) that only some programs apply",
            short(&prelude)
        ));
        Ok(())
    }
}

impl<'i> RuleBodyItemParser<'i, (), ()> for Body<'_> {
    fn parse_declarations(&self) -> bool {
        true
    }
    fn parse_qualified(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_media_and_what_cannot_be_vouched_for_are_read_apart() {
        let sheet = parse_sheet(
            "/* x */ .a, span#b.c { display: none !important; color: var(--x) }\n\
             @media (max-width: 600px) { .m { display:none } }\n\
             @font-face { font-family: X; src: url(x.woff) }\n\
             @font-face { font-family: \"Cambria Math\"; panose-1: 2 4 5 3 }\n\
             @page WordSection1 { size: 8.5in 11in }\n\
             div { .inner { color: red } }",
        );
        assert_eq!(sheet.rules.len(), 3);
        assert_eq!(sheet.rules[0].prelude, ".a, span#b.c");
        let d = &sheet.rules[0].declarations;
        assert_eq!((d[0].value.as_str(), d[0].important), ("none", true));
        assert_eq!(d[1].functions, ["var"]);
        assert!(matches!(
            sheet.rules[1].condition,
            Condition::Viewports {
                desktop: false,
                phone: true
            }
        ));
        assert_eq!(sheet.unverifiable.len(), 2, "{:?}", sheet.unverifiable);
    }

    #[test]
    fn an_inline_style_reads_past_comments_and_keeps_nested_functions() {
        let d = parse_inline("display:/**/none; font-size: calc(1px + var(--a))");
        assert_eq!(d[0].value, "none");
        assert_eq!(d[1].functions, ["calc", "var"]);
    }
}
