//! Surface syntax: the AST and the parser (lexer + LALRPOP grammar).
pub mod ast;
