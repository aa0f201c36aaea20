//! The hand-written lexer that feeds the LALRPOP grammar.
//!
//! Architecture invariant: the lexer sees only text. It turns a `&str` into
//! `(start, Tok, end)` byte-offset triples and reports every bad character, unterminated
//! comment and oversized literal as an [`InputError`](super::InputError) (a `parse.error`);
//! it never panics and never recurses. `[` followed (after whitespace) by `]` is the single
//! token `[]`, so that `int[] a` (a type) and `a[i]` (an index) are told apart without
//! lookahead in the grammar.

use super::InputError;
use crate::syntax::ast::Span;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok<'a> {
    Ident(&'a str),
    Int(i64),
    /// A decimal literal too large for `i64` (`int` is the mathematical integers).
    BigInt(&'a str),
    // Keywords.
    Class,
    Static,
    Void,
    IntTy,
    BoolTy,
    Null,
    This,
    True,
    False,
    New,
    If,
    Else,
    While,
    Invariant,
    Requires,
    Ensures,
    Pure,
    Predicate,
    Return,
    Assert,
    Open,
    Close,
    Use,
    Opening,
    Using,
    In,
    Old,
    Acc,
    Untouched,
    Result,
    Join,
    Interface,
    Implements,
    Extends,
    /// Value quantifiers and sequences (LANGUAGE.md sections 13-15).
    Forall,
    Exists,
    Seq,
    Decreases,
    /// `public`, `private`, `protected`, `final`: accepted before members, ignored.
    Modifier(&'a str),
    // Punctuation.
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    /// `[]` (possibly with whitespace inside): only ever part of an array type.
    Brackets,
    Semi,
    Comma,
    Dot,
    Assign,
    ColonAssign,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    AndAnd,
    OrOr,
    Implies,
    Question,
    Colon,
    /// `::` after a quantifier's binders.
    ColonColon,
    /// `..` inside a slice `s[i..j]`.
    DotDot,
}

fn keyword(word: &str) -> Option<Tok<'_>> {
    Some(match word {
        "class" => Tok::Class,
        "static" => Tok::Static,
        "void" => Tok::Void,
        "int" => Tok::IntTy,
        "bool" => Tok::BoolTy,
        "null" => Tok::Null,
        "this" => Tok::This,
        "true" => Tok::True,
        "false" => Tok::False,
        "new" => Tok::New,
        "if" => Tok::If,
        "else" => Tok::Else,
        "while" => Tok::While,
        "invariant" => Tok::Invariant,
        "requires" => Tok::Requires,
        "ensures" => Tok::Ensures,
        "pure" => Tok::Pure,
        "predicate" => Tok::Predicate,
        "return" => Tok::Return,
        "assert" => Tok::Assert,
        "open" => Tok::Open,
        "close" => Tok::Close,
        "use" => Tok::Use,
        "opening" => Tok::Opening,
        "using" => Tok::Using,
        "in" => Tok::In,
        "old" => Tok::Old,
        "acc" => Tok::Acc,
        "untouched" => Tok::Untouched,
        "result" => Tok::Result,
        "join" => Tok::Join,
        "interface" => Tok::Interface,
        "implements" => Tok::Implements,
        "extends" => Tok::Extends,
        "forall" => Tok::Forall,
        "exists" => Tok::Exists,
        "seq" => Tok::Seq,
        "decreases" => Tok::Decreases,
        "public" | "private" | "protected" | "final" => Tok::Modifier(word),
        _ => return None,
    })
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Tok::Ident(s) | Tok::Modifier(s) => s,
            Tok::Int(n) => return write!(f, "{n}"),
            Tok::BigInt(n) => return write!(f, "{n}"),
            Tok::Class => "class",
            Tok::Static => "static",
            Tok::Void => "void",
            Tok::IntTy => "int",
            Tok::BoolTy => "bool",
            Tok::Null => "null",
            Tok::This => "this",
            Tok::True => "true",
            Tok::False => "false",
            Tok::New => "new",
            Tok::If => "if",
            Tok::Else => "else",
            Tok::While => "while",
            Tok::Invariant => "invariant",
            Tok::Requires => "requires",
            Tok::Ensures => "ensures",
            Tok::Pure => "pure",
            Tok::Predicate => "predicate",
            Tok::Return => "return",
            Tok::Assert => "assert",
            Tok::Open => "open",
            Tok::Close => "close",
            Tok::Use => "use",
            Tok::Opening => "opening",
            Tok::Using => "using",
            Tok::In => "in",
            Tok::Old => "old",
            Tok::Acc => "acc",
            Tok::Untouched => "untouched",
            Tok::Result => "result",
            Tok::Join => "join",
            Tok::Interface => "interface",
            Tok::Implements => "implements",
            Tok::Extends => "extends",
            Tok::Forall => "forall",
            Tok::Exists => "exists",
            Tok::Seq => "seq",
            Tok::Decreases => "decreases",
            Tok::ColonColon => "::",
            Tok::DotDot => "..",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Brackets => "[]",
            Tok::Semi => ";",
            Tok::Comma => ",",
            Tok::Dot => ".",
            Tok::Assign => "=",
            Tok::ColonAssign => ":=",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Bang => "!",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Implies => "==>",
            Tok::Question => "?",
            Tok::Colon => ":",
        };
        f.write_str(s)
    }
}

pub type Spanned<'a> = (usize, Tok<'a>, usize);

/// A character that changes how a terminal shows the text around it without being
/// shown itself: a control character (C0, DEL, C1: an escape sequence starts with one)
/// or a bidirectional formatting character (which can make text read in another order
/// than it is, "Trojan Source"). Messages and names show such characters escaped.
pub fn is_invisible_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Lex the whole text. On failure, the first lexical error of each line that has one
/// (the front end keeps one input error per line): later bad characters on a line cost
/// O(1) each, so a line of N of them is lexed in O(N).
pub fn lex(src: &str) -> Result<Vec<Spanned<'_>>, Vec<InputError>> {
    let mut lexer =
        Lexer { src, bytes: src.as_bytes(), pos: 0, errors: Vec::new(), quiet_until: 0 };
    let mut toks = Vec::new();
    while let Some(item) = lexer.next_token() {
        if let Some(t) = item {
            toks.push(t);
        }
    }
    if lexer.errors.is_empty() { Ok(toks) } else { Err(lexer.errors) }
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    errors: Vec<InputError>,
    /// The end of the line of the last error: errors before it are not made.
    quiet_until: usize,
}

impl<'a> Lexer<'a> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    /// Record the error `make` builds at byte `at`, unless its line has one already.
    fn report(&mut self, at: usize, make: impl FnOnce() -> InputError) {
        if at < self.quiet_until {
            return;
        }
        self.quiet_until =
            match self.bytes[at.min(self.bytes.len())..].iter().position(|&b| b == b'\n') {
                Some(i) => at + i + 1,
                None => self.bytes.len() + 1,
            };
        self.errors.push(make());
    }

    /// Skip whitespace and comments; an unterminated block comment is an error.
    fn skip_trivia(&mut self) {
        loop {
            match (self.peek(0), self.peek(1)) {
                (b' ' | b'\t' | b'\n' | b'\r' | b'\x0c', _) => self.pos += 1,
                (b'/', b'/') => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                (b'/', b'*') => {
                    let start = self.pos;
                    match self.src[start + 2..].find("*/") {
                        Some(i) => self.pos = start + 2 + i + 2,
                        None => {
                            self.pos = self.bytes.len();
                            self.report(start, || {
                                InputError::parse(
                                    "unterminated comment: `/*` is never closed by `*/`",
                                    Span::new(start, start + 2),
                                    "comment starts here",
                                )
                            });
                            return;
                        }
                    }
                }
                _ => return,
            }
        }
    }

    /// The next token; `Some(None)` for a character that is not one (its error is
    /// recorded); `None` at the end.
    fn next_token(&mut self) -> Option<Option<Spanned<'a>>> {
        self.skip_trivia();
        let start = self.pos;
        let c = self.peek(0);
        if self.pos >= self.bytes.len() {
            return None;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                self.pos += 1;
            }
            let word = &self.src[start..self.pos];
            let tok = keyword(word).unwrap_or(Tok::Ident(word));
            return Some(Some((start, tok, self.pos)));
        }
        if c.is_ascii_digit() {
            while self.peek(0).is_ascii_digit() {
                self.pos += 1;
            }
            let text = &self.src[start..self.pos];
            return Some(Some(match text.parse::<i64>() {
                Ok(n) => (start, Tok::Int(n), self.pos),
                Err(_) => (start, Tok::BigInt(text), self.pos),
            }));
        }
        let two = |t| Some(Some((start, t, start + 2)));
        match (c, self.peek(1), self.peek(2)) {
            (b'=', b'=', b'>') => {
                self.pos += 3;
                return Some(Some((start, Tok::Implies, self.pos)));
            }
            (b'=', b'=', _) => {
                self.pos += 2;
                return two(Tok::EqEq);
            }
            (b'!', b'=', _) => {
                self.pos += 2;
                return two(Tok::NotEq);
            }
            (b'<', b'=', _) => {
                self.pos += 2;
                return two(Tok::Le);
            }
            (b'>', b'=', _) => {
                self.pos += 2;
                return two(Tok::Ge);
            }
            (b'&', b'&', _) => {
                self.pos += 2;
                return two(Tok::AndAnd);
            }
            (b'|', b'|', _) => {
                self.pos += 2;
                return two(Tok::OrOr);
            }
            (b':', b'=', _) => {
                self.pos += 2;
                return two(Tok::ColonAssign);
            }
            (b':', b':', _) => {
                self.pos += 2;
                return two(Tok::ColonColon);
            }
            (b'.', b'.', _) => {
                self.pos += 2;
                return two(Tok::DotDot);
            }
            _ => {}
        }
        let tok = match c {
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => return Some(Some(self.bracket())),
            b']' => Tok::RBracket,
            b';' => Tok::Semi,
            b',' => Tok::Comma,
            b'.' => Tok::Dot,
            b'=' => Tok::Assign,
            b'<' => Tok::Lt,
            b'>' => Tok::Gt,
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'*' => Tok::Star,
            b'/' => Tok::Slash,
            b'%' => Tok::Percent,
            b'!' => Tok::Bang,
            b'?' => Tok::Question,
            b':' => Tok::Colon,
            _ => {
                let ch = self.src[start..].chars().next().unwrap_or('\u{fffd}');
                self.pos += ch.len_utf8();
                let end = self.pos;
                self.report(start, || {
                    let shown = if ch.is_control() {
                        format!("{ch:?}")
                    } else if is_invisible_control(ch) {
                        format!("'{}'", ch.escape_unicode())
                    } else {
                        format!("`{ch}`")
                    };
                    InputError::parse(
                        format!("unexpected character {shown}"),
                        Span::new(start, end),
                        "not part of the language",
                    )
                });
                return Some(None);
            }
        };
        self.pos += 1;
        Some(Some((start, tok, self.pos)))
    }

    /// `[` alone, or `[` whitespace* `]` as the array-type token `[]`.
    fn bracket(&mut self) -> Spanned<'a> {
        let start = self.pos;
        let mut i = 1;
        while matches!(self.peek(i), b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        if self.peek(i) == b']' {
            self.pos += i + 1;
            (start, Tok::Brackets, self.pos)
        } else {
            self.pos += 1;
            (start, Tok::LBracket, self.pos)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        lex(s).unwrap().into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn brackets_and_operators() {
        assert_eq!(
            toks("int[ ] a; a[i] ==> b == c"),
            vec![
                Tok::IntTy,
                Tok::Brackets,
                Tok::Ident("a"),
                Tok::Semi,
                Tok::Ident("a"),
                Tok::LBracket,
                Tok::Ident("i"),
                Tok::RBracket,
                Tok::Implies,
                Tok::Ident("b"),
                Tok::EqEq,
                Tok::Ident("c"),
            ]
        );
    }

    #[test]
    fn invisible_characters_are_named_escaped() {
        for (text, shown) in
            [("\u{1b}", "'\\u{1b}'"), ("\u{202e}", "'\\u{202e}'"), ("\u{9b}", "'\\u{9b}'")]
        {
            let errs = lex(text).unwrap_err();
            assert!(errs[0].message.ends_with(shown), "{}", errs[0].message);
        }
        assert!(lex("é").unwrap_err()[0].message.contains("`é`"));
    }

    #[test]
    fn comments_and_errors() {
        assert_eq!(toks("// x\n/* y */ z"), vec![Tok::Ident("z")]);
        let errs = lex("a # b\n /* c").unwrap_err();
        assert_eq!(errs.len(), 2);
        assert!(errs[0].message.contains("`#`"));
        assert!(errs[1].message.contains("unterminated"));
        // One error per line: the first.
        let errs = lex("a # $ ?? \n@").unwrap_err();
        assert_eq!(errs.len(), 2);
        assert!(errs[0].message.contains("`#`"));
        assert!(errs[1].message.contains("`@`"));
        // `int` is the mathematical integers: literals beyond i64 are kept as digits.
        assert_eq!(toks("99999999999999999999"), vec![Tok::BigInt("99999999999999999999")]);
    }
}
