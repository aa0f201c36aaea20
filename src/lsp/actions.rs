//! Quick fixes: the suggested fixes of a run (`crate::pipeline::fix`, each verified
//! before it was offered) as LSP code actions whose edits are the fix's edits.
//!
//! Architecture invariant: a view of the analysis, like `analysis`: ranges are computed
//! against the text that was verified; the caller asks only when the client's text is
//! still that text.

use super::analysis::Analysis;
use crate::pipeline::MemberOutcome;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, NumberOrString, Range, TextEdit,
    Uri, WorkspaceEdit,
};
use std::collections::HashMap;

/// The quick fixes of the failures on the lines of `range`.
pub fn code_actions(analysis: &Analysis, uri: &Uri, range: Range) -> Vec<CodeActionOrCommand> {
    let mut out = vec![];
    for outcome in analysis.outcomes.iter().flatten() {
        let MemberOutcome::Done(r) = outcome else { continue };
        for e in &r.errors {
            let Some(fix) = &e.fix else { continue };
            let at = analysis.index.range(e.span);
            // Lines, not characters: an editor asks for the cursor's place on the line.
            if at.end.line < range.start.line || range.end.line < at.start.line {
                continue;
            }
            let edits: Vec<TextEdit> = fix
                .edits
                .iter()
                .map(|(s, text)| TextEdit {
                    range: analysis.index.range(*s),
                    new_text: text.clone(),
                })
                .collect();
            let diagnostic = Diagnostic {
                range: at,
                code: Some(NumberOrString::String(e.id.into())),
                source: Some(super::analysis::SOURCE.into()),
                message: e.message.clone(),
                ..Diagnostic::default()
            };
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.message.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
    }
    out
}
