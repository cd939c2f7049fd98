//! The pattern term language: AST with source spans and its parser (see DESIGN.md).
