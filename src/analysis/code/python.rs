//! Python's syntax as the reader's shapes (tree-sitter-python 0.25).

use tree_sitter::Node;

use super::syntax::{
    Callee, KeywordArgument, Piece, Shape, arguments, fragments, parameter_names, text_of, unescape,
};

pub(super) fn shape<'t>(node: Node<'t>, code: &str) -> Shape<'t> {
    let field = |name: &str| node.child_by_field_name(name);
    match node.kind() {
        "call" => {
            let Some(function) = field("function") else {
                return Shape::Other;
            };
            let keyword =
                KeywordArgument { kind: "keyword_argument", name: "name", value: "value" };
            let args = field("arguments")
                .map(|list| {
                    arguments(list, code, &keyword, &["list_splat", "dictionary_splat", "comment"])
                })
                .unwrap_or_default();
            Shape::Call { callee: Callee::Expr(function), args }
        }
        "function_definition" | "lambda" => {
            let parameters = field("parameters");
            let names = parameters
                .map(|list| parameter_names(list, code, &["identifier"], &["value", "type"]))
                .unwrap_or_default();
            Shape::Scope { parameters, names }
        }
        "assignment" => match (field("left"), field("right")) {
            (Some(left), Some(value)) if left.kind() == "identifier" => {
                Shape::Bind { names: vec![(None, text_of(left, code).to_owned())], value }
            }
            _ => Shape::Other,
        },
        "import_statement" => {
            let mut pairs = Vec::new();
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                match name.kind() {
                    "aliased_import" => {
                        if let (Some(module), Some(alias)) =
                            (name.child_by_field_name("name"), name.child_by_field_name("alias"))
                        {
                            pairs.push((
                                text_of(alias, code).to_owned(),
                                text_of(module, code).to_owned(),
                            ));
                        }
                    }
                    _ => {
                        // `import os.path` binds `os`.
                        let module = text_of(name, code);
                        let first = module.split('.').next().unwrap_or(module);
                        pairs.push((first.to_owned(), first.to_owned()));
                    }
                }
            }
            Shape::Import(pairs)
        }
        "import_from_statement" => {
            let Some(module) = field("module_name").map(|m| text_of(m, code).to_owned()) else {
                return Shape::Other;
            };
            let mut cursor = node.walk();
            if node.named_children(&mut cursor).any(|child| child.kind() == "wildcard_import") {
                return Shape::ImportAll(module);
            }
            let mut pairs = Vec::new();
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let (imported, alias) = match name.kind() {
                    "aliased_import" => {
                        (name.child_by_field_name("name"), name.child_by_field_name("alias"))
                    }
                    _ => (Some(name), Some(name)),
                };
                if let (Some(imported), Some(alias)) = (imported, alias) {
                    pairs.push((
                        text_of(alias, code).to_owned(),
                        format!("{module}.{}", text_of(imported, code)),
                    ));
                }
            }
            Shape::Import(pairs)
        }
        "string" => {
            let mut pieces = Vec::new();
            let mut cursor = node.walk();
            let raw = node
                .child(0)
                .is_some_and(|start| text_of(start, code).to_ascii_lowercase().contains('r'));
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "string_content" if raw => {
                        pieces.push(Piece::Literal(text_of(child, code).to_owned()))
                    }
                    "string_content" => pieces.push(Piece::Literal(unescape(text_of(child, code)))),
                    "interpolation" => {
                        pieces.extend(child.child_by_field_name("expression").map(Piece::Expr))
                    }
                    _ => {}
                }
            }
            Shape::Text(pieces)
        }
        "concatenated_string" => {
            let mut cursor = node.walk();
            Shape::Concat(node.named_children(&mut cursor).collect())
        }
        "binary_operator" => {
            match (field("left"), field("operator").map(|o| text_of(o, code)), field("right")) {
                (Some(left), Some("+"), Some(right)) => Shape::Concat(vec![left, right]),
                (Some(left), Some("/"), Some(right)) => Shape::PathJoin(left, right),
                _ => Shape::Other,
            }
        }
        "identifier" => Shape::Name(text_of(node, code).to_owned()),
        "attribute" => match (field("object"), field("attribute")) {
            (Some(object), Some(attribute)) => {
                Shape::Member(object, text_of(attribute, code).to_owned())
            }
            _ => Shape::Other,
        },
        "subscript" => match (field("value"), field("subscript")) {
            (Some(value), Some(key)) if key.kind() == "string" => {
                Shape::Member(value, fragments(key, code, "string_content"))
            }
            _ => Shape::Other,
        },
        "list" | "tuple" => {
            let mut cursor = node.walk();
            Shape::Items(node.named_children(&mut cursor).collect())
        }
        "parenthesized_expression" | "await" => {
            node.named_child(0).map_or(Shape::Other, Shape::Same)
        }
        "integer" => Shape::Text(vec![Piece::Literal(text_of(node, code).to_owned())]),
        _ => Shape::Other,
    }
}
