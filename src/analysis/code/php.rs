//! PHP's syntax as the reader's shapes (tree-sitter-php 0.25, code
//! without `<?php`): functions are `php.NAME`, backticks run a shell.

use tree_sitter::Node;

use super::syntax::{Arg, Callee, Piece, Shape, fragments, parameter_names, text_of, unescape};

pub(super) fn shape<'t>(node: Node<'t>, code: &str) -> Shape<'t> {
    let field = |name: &str| node.child_by_field_name(name);
    match node.kind() {
        "function_call_expression" => {
            let Some(function) = field("function") else {
                return Shape::Other;
            };
            let mut args = Vec::new();
            if let Some(list) = field("arguments") {
                let mut cursor = list.walk();
                for arg in list.named_children(&mut cursor).filter(|a| a.kind() == "argument") {
                    let keyword =
                        arg.child_by_field_name("name").map(|name| text_of(name, code).to_owned());
                    let mut inner = arg.walk();
                    let value = arg
                        .named_children(&mut inner)
                        .filter(|child| Some(*child) != arg.child_by_field_name("name"))
                        .last();
                    args.extend(value.map(|value| Arg { keyword, value }));
                }
            }
            Shape::Call { callee: Callee::Expr(function), args }
        }
        "function_definition" | "method_declaration" | "anonymous_function" | "arrow_function" => {
            let parameters = field("parameters");
            let names = parameters
                .map(|list| {
                    parameter_names(
                        list,
                        code,
                        &["variable_name"],
                        &["default_value", "type", "attributes"],
                    )
                })
                .unwrap_or_default();
            Shape::Scope { parameters, names }
        }
        "assignment_expression" => match (field("left"), field("right")) {
            (Some(left), Some(value)) if left.kind() == "variable_name" => {
                Shape::Bind { names: vec![(None, text_of(left, code).to_owned())], value }
            }
            _ => Shape::Other,
        },
        "string" | "encapsed_string" | "shell_command_expression" | "heredoc" | "nowdoc" => {
            let mut pieces = Vec::new();
            let mut cursor = node.walk();
            let double = node.kind() != "string" && node.kind() != "nowdoc";
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "string_content" | "string_value" | "heredoc_body" | "nowdoc_body"
                        if double =>
                    {
                        pieces.push(Piece::Literal(unescape(text_of(child, code))))
                    }
                    "string_content" | "string_value" | "heredoc_body" | "nowdoc_body" => {
                        pieces.push(Piece::Literal(text_of(child, code).to_owned()))
                    }
                    "escape_sequence" => {
                        pieces.push(Piece::Literal(unescape(text_of(child, code))))
                    }
                    _ if double => pieces.push(Piece::Expr(child)),
                    _ => {}
                }
            }
            if node.kind() == "shell_command_expression" {
                Shape::Shell(pieces)
            } else {
                Shape::Text(pieces)
            }
        }
        "binary_expression" => {
            match (field("left"), field("operator").map(|o| text_of(o, code)), field("right")) {
                (Some(left), Some("."), Some(right)) => Shape::Concat(vec![left, right]),
                _ => Shape::Other,
            }
        }
        "name" | "variable_name" | "qualified_name" => {
            Shape::Name(text_of(node, code).trim_start_matches('\\').to_owned())
        }
        "subscript_expression" => match (node.named_child(0), node.named_child(1)) {
            // `$_SERVER['HOME']` and `$_SERVER["HOME"]` alike.
            (Some(object), Some(key)) if matches!(key.kind(), "string" | "encapsed_string") => {
                let mut name = fragments(key, code, "string_content");
                if name.is_empty() {
                    name = fragments(key, code, "string_value");
                }
                Shape::Member(object, name)
            }
            _ => Shape::Other,
        },
        "array_creation_expression" => {
            let mut cursor = node.walk();
            Shape::Items(
                node.named_children(&mut cursor)
                    .filter_map(|element| element.named_child(0))
                    .collect(),
            )
        }
        "parenthesized_expression" => node.named_child(0).map_or(Shape::Other, Shape::Same),
        "integer" => Shape::Text(vec![Piece::Literal(text_of(node, code).to_owned())]),
        _ => Shape::Other,
    }
}
