//! JavaScript's syntax as the reader's shapes (tree-sitter-javascript
//! 0.25): CommonJS `require` and ES `import` both bind modules.

use tree_sitter::Node;

use super::syntax::{Arg, Callee, Piece, Shape, fragments, parameter_names, text_of, unescape};

pub(super) fn shape<'t>(node: Node<'t>, code: &str) -> Shape<'t> {
    let field = |name: &str| node.child_by_field_name(name);
    match node.kind() {
        "call_expression" | "new_expression" => {
            let Some(function) = field("function").or_else(|| field("constructor")) else {
                return Shape::Other;
            };
            let mut args = Vec::new();
            let list = field("arguments");
            if let Some(list) = list.filter(|list| list.kind() == "template_string") {
                // A tagged template: the tag is called with the template.
                args.push(Arg { keyword: None, value: list });
            } else if let Some(list) = list {
                let mut cursor = list.walk();
                args.extend(
                    list.named_children(&mut cursor)
                        .filter(|a| a.kind() != "comment")
                        .map(|value| Arg { keyword: None, value }),
                );
            }
            Shape::Call { callee: Callee::Expr(function), args }
        }
        "function_declaration"
        | "function_expression"
        | "generator_function_declaration"
        | "generator_function"
        | "arrow_function"
        | "method_definition" => {
            // An arrow's one bare parameter is its `parameter`.
            let parameters = field("parameters").or_else(|| field("parameter"));
            let names = parameters
                .map(|list| {
                    parameter_names(
                        list,
                        code,
                        &["identifier", "shorthand_property_identifier_pattern"],
                        &["right", "key"],
                    )
                })
                .unwrap_or_default();
            Shape::Scope { parameters, names }
        }
        "variable_declarator" | "assignment_expression" => {
            let (Some(name), Some(value)) = (
                field("name").or_else(|| field("left")),
                field("value").or_else(|| field("right")),
            ) else {
                return Shape::Other;
            };
            match name.kind() {
                "identifier" => {
                    Shape::Bind { names: vec![(None, text_of(name, code).to_owned())], value }
                }
                "object_pattern" => {
                    let mut names = Vec::new();
                    let mut cursor = name.walk();
                    for pair in name.named_children(&mut cursor) {
                        match pair.kind() {
                            "shorthand_property_identifier_pattern" => {
                                let key = text_of(pair, code).to_owned();
                                names.push((Some(key.clone()), key));
                            }
                            "pair_pattern" => {
                                if let (Some(key), Some(alias)) = (
                                    pair.child_by_field_name("key"),
                                    pair.child_by_field_name("value"),
                                ) {
                                    names.push((
                                        Some(text_of(key, code).to_owned()),
                                        text_of(alias, code).to_owned(),
                                    ));
                                }
                            }
                            _ => {}
                        }
                    }
                    Shape::Bind { names, value }
                }
                _ => Shape::Other,
            }
        }
        "import_statement" => {
            let Some(source) = field("source") else {
                return Shape::Other;
            };
            let module = fragments(source, code, "string_fragment");
            let mut pairs = Vec::new();
            let mut cursor = node.walk();
            for clause in node.named_children(&mut cursor).filter(|c| c.kind() == "import_clause") {
                let mut inner = clause.walk();
                for part in clause.named_children(&mut inner) {
                    match part.kind() {
                        "identifier" => {
                            pairs.push((text_of(part, code).to_owned(), module.clone()))
                        }
                        "namespace_import" => pairs.extend(
                            part.named_child(0)
                                .map(|name| (text_of(name, code).to_owned(), module.clone())),
                        ),
                        "named_imports" => {
                            let mut specifiers = part.walk();
                            for specifier in part.named_children(&mut specifiers) {
                                let Some(name) = specifier.child_by_field_name("name") else {
                                    continue;
                                };
                                let alias = specifier.child_by_field_name("alias").unwrap_or(name);
                                pairs.push((
                                    text_of(alias, code).to_owned(),
                                    format!("{module}.{}", text_of(name, code)),
                                ));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Shape::Import(pairs)
        }
        "string" | "template_string" => {
            let mut pieces = Vec::new();
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                match child.kind() {
                    "string_fragment" => {
                        pieces.push(Piece::Literal(text_of(child, code).to_owned()))
                    }
                    "escape_sequence" => {
                        pieces.push(Piece::Literal(unescape(text_of(child, code))))
                    }
                    "template_substitution" => pieces.extend(child.named_child(0).map(Piece::Expr)),
                    _ => {}
                }
            }
            Shape::Text(pieces)
        }
        "binary_expression" => {
            match (field("left"), field("operator").map(|o| text_of(o, code)), field("right")) {
                (Some(left), Some("+"), Some(right)) => Shape::Concat(vec![left, right]),
                _ => Shape::Other,
            }
        }
        "identifier" => Shape::Name(text_of(node, code).to_owned()),
        "member_expression" => match (field("object"), field("property")) {
            (Some(object), Some(property)) => {
                Shape::Member(object, text_of(property, code).to_owned())
            }
            _ => Shape::Other,
        },
        "subscript_expression" => match (field("object"), field("index")) {
            (Some(object), Some(index)) if index.kind() == "string" => {
                Shape::Member(object, fragments(index, code, "string_fragment"))
            }
            _ => Shape::Other,
        },
        "array" => {
            let mut cursor = node.walk();
            Shape::Items(node.named_children(&mut cursor).collect())
        }
        "parenthesized_expression" | "await_expression" => {
            node.named_child(0).map_or(Shape::Other, Shape::Same)
        }
        "number" => Shape::Text(vec![Piece::Literal(text_of(node, code).to_owned())]),
        _ => Shape::Other,
    }
}
