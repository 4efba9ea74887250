//! Ruby's syntax as the reader's shapes (tree-sitter-ruby 0.23): a call
//! without a receiver is `Kernel`'s, backticks and `%x()` run a shell.

use tree_sitter::Node;

use super::syntax::{
    Callee, KeywordArgument, Piece, Shape, arguments, fragments, parameter_names, text_of, unescape,
};

pub(super) fn shape<'t>(node: Node<'t>, code: &str) -> Shape<'t> {
    let field = |name: &str| node.child_by_field_name(name);
    match node.kind() {
        "call" => {
            let Some(method) = field("method") else {
                return Shape::Other;
            };
            let keyword = KeywordArgument { kind: "pair", name: "key", value: "value" };
            let args = field("arguments")
                .map(|list| {
                    arguments(
                        list,
                        code,
                        &keyword,
                        &["comment", "block_argument", "splat_argument", "hash_splat_argument"],
                    )
                })
                .unwrap_or_default();
            let callee = match field("receiver") {
                Some(receiver) => Callee::Method(receiver, text_of(method, code).to_owned()),
                None => Callee::Expr(method),
            };
            Shape::Call { callee, args }
        }
        "method" | "singleton_method" | "block" | "do_block" | "lambda" => {
            let parameters = field("parameters");
            let names = parameters
                .map(|list| parameter_names(list, code, &["identifier"], &["value"]))
                .unwrap_or_default();
            Shape::Scope { parameters, names }
        }
        "assignment" => match (field("left"), field("right")) {
            (Some(left), Some(value)) if matches!(left.kind(), "identifier" | "constant") => {
                Shape::Bind { names: vec![(None, text_of(left, code).to_owned())], value }
            }
            _ => Shape::Other,
        },
        "string" | "subshell" => {
            let mut pieces = Vec::new();
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "string_content" => {
                        pieces.push(Piece::Literal(text_of(child, code).to_owned()))
                    }
                    "escape_sequence" => {
                        pieces.push(Piece::Literal(unescape(text_of(child, code))))
                    }
                    "interpolation" => pieces.extend(child.named_child(0).map(Piece::Expr)),
                    _ => {}
                }
            }
            if node.kind() == "subshell" { Shape::Shell(pieces) } else { Shape::Text(pieces) }
        }
        "binary" => {
            match (field("left"), field("operator").map(|o| text_of(o, code)), field("right")) {
                (Some(left), Some("+"), Some(right)) => Shape::Concat(vec![left, right]),
                _ => Shape::Other,
            }
        }
        "identifier" | "constant" => Shape::Name(text_of(node, code).to_owned()),
        "scope_resolution" => match (field("scope"), field("name")) {
            (Some(scope), Some(name)) => Shape::Member(scope, text_of(name, code).to_owned()),
            (None, Some(name)) => Shape::Name(text_of(name, code).to_owned()),
            _ => Shape::Other,
        },
        "element_reference" => match (field("object"), node.named_child(1)) {
            (Some(object), Some(key)) if key.kind() == "string" => {
                Shape::Member(object, fragments(key, code, "string_content"))
            }
            _ => Shape::Other,
        },
        "array" => {
            let mut cursor = node.walk();
            Shape::Items(node.named_children(&mut cursor).collect())
        }
        "parenthesized_statements" => node.named_child(0).map_or(Shape::Other, Shape::Same),
        "integer" => Shape::Text(vec![Piece::Literal(text_of(node, code).to_owned())]),
        _ => Shape::Other,
    }
}
