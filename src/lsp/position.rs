//! Byte offsets of a text (the verifier's spans) to LSP positions (0-based lines and
//! UTF-16 code units, the protocol's default encoding) and back.
//!
//! Architecture invariant: every conversion is total: an offset past the end, inside
//! a character, or a position past a line's end is clamped, never a panic.

use crate::syntax::ast::Span;
use lsp_types::{Position, Range};
use std::sync::Arc;

/// A text with its line starts.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    text: Arc<String>,
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: Arc<String>) -> LineIndex {
        let starts = crate::report::line_starts(&text);
        LineIndex { text, starts }
    }

    pub fn text(&self) -> &Arc<String> {
        &self.text
    }

    /// The 0-based line holding `offset`.
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset.min(self.text.len())).saturating_sub(1)
    }

    /// The position of a byte offset.
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line(offset);
        let start = self.starts[line];
        let col: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, col as u32)
    }

    pub fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start as usize), self.position(span.end as usize))
    }

    /// The byte offset of a position (clamped to its line, and to the text).
    pub fn offset(&self, p: Position) -> usize {
        let Some(&start) = self.starts.get(p.line as usize) else {
            return self.text.len();
        };
        let end = self.starts.get(p.line as usize + 1).copied().unwrap_or(self.text.len());
        let mut units = 0usize;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= p.character as usize || c == '\n' || c == '\r' {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        let text = "ab\n∀x𝔸y\n\nz";
        let ix = LineIndex::new(Arc::new(text.to_string()));
        let y = text.find('y').unwrap();
        // `∀` is one UTF-16 unit, `𝔸` two.
        assert_eq!(ix.position(y), Position::new(1, 4));
        assert_eq!(ix.offset(Position::new(1, 4)), y);
        assert_eq!(ix.position(text.len()), Position::new(3, 1));
        assert_eq!(ix.offset(Position::new(0, 99)), 2);
        assert_eq!(ix.offset(Position::new(99, 0)), text.len());
        // Inside a character: clamped to its start.
        assert_eq!(ix.position(y - 1), Position::new(1, 2));
        assert_eq!(ix.line(text.len() + 10), 3);
    }
}
