//! Parameter definitions: what an operation accepts, as data.
//!
//! A [`ParamSpec`] is the single source for both validation and
//! introspection (`ParameterInfo`), so the two cannot drift apart
//! (introspection spec 8.1.1).

use crate::names::named_enum;
use serde_json::{Map, Value};

use super::error::AqlError;

named_enum! {
    /// The JSON types a parameter may declare.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ParamType {
        String => "string",
        Integer => "integer",
        Number => "number",
        Boolean => "boolean",
        Object => "object",
        Array => "array",
        /// No single JSON type: a downstream schema that allows several (or
        /// says nothing). The downstream's own schema still validates it.
        Any => "any",
        /// The `fields` parameter's value: a preset name or a list of dot
        /// paths (the named type `FieldSelection` describes both forms).
        FieldSelection => "FieldSelection",
    }
}

impl ParamType {
    /// Whether `value` has this type. A whole number written as a float
    /// (`5.0`) counts as an integer: JSON does not distinguish them and
    /// agents produce both.
    pub fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (Self::String, Value::String(_))
            | (Self::Boolean, Value::Bool(_))
            | (Self::Object, Value::Object(_))
            | (Self::Array, Value::Array(_))
            | (Self::Number, Value::Number(_))
            | (Self::FieldSelection, Value::String(_) | Value::Array(_))
            | (Self::Any, _) => true,
            (Self::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        }
    }
}

/// One accepted parameter of an operation.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    pub ty: ParamType,
    pub required: bool,
    pub description: String,
    pub default: Option<Value>,
    /// Allowed values; `None` means any value of the type.
    pub allowed: Option<Vec<Value>>,
    /// Other names accepted for this parameter (the spec's camelCase forms).
    pub aliases: Vec<String>,
}

impl ParamSpec {
    pub fn required(name: &str, ty: ParamType, description: &str) -> Self {
        Self {
            name: name.into(),
            ty,
            required: true,
            description: description.into(),
            default: None,
            allowed: None,
            aliases: Vec::new(),
        }
    }

    pub fn optional(name: &str, ty: ParamType, description: &str) -> Self {
        Self { required: false, ..Self::required(name, ty, description) }
    }

    pub fn with_default(mut self, default: Value) -> Self {
        self.default = Some(default);
        self
    }

    /// Also accepts the parameter under `alias`.
    pub fn alias(mut self, alias: &str) -> Self {
        self.aliases.push(alias.into());
        self
    }

    /// Whether `key` names this parameter.
    pub fn is_named(&self, key: &str) -> bool {
        self.name == key || self.aliases.iter().any(|a| a == key)
    }

    pub fn one_of(mut self, allowed: &[&str]) -> Self {
        self.allowed = Some(allowed.iter().map(|&s| Value::from(s)).collect());
        self
    }

    /// A value a call may pass for this parameter: its default, else its
    /// first allowed value, else a placeholder of its type (a string names
    /// the parameter: `<owner>`).
    pub fn example_value(&self) -> Value {
        if let Some(value) = self
            .default
            .as_ref()
            .or_else(|| self.allowed.as_ref().and_then(|allowed| allowed.first()))
        {
            return value.clone();
        }
        match self.ty {
            ParamType::String | ParamType::Any => Value::String(format!("<{}>", self.name)),
            ParamType::Integer | ParamType::Number => 1.into(),
            ParamType::Boolean => false.into(),
            ParamType::Object => Value::Object(Map::new()),
            ParamType::Array => Value::Array(Vec::new()),
            ParamType::FieldSelection => "full".into(),
        }
    }

    /// Checks one supplied value against the declared type and allowed set.
    pub fn check(&self, operation: &str, value: &Value) -> Result<(), AqlError> {
        if !self.ty.admits(value) {
            return Err(AqlError::invalid_type(Some(operation), &self.name, self.ty.name(), value));
        }
        match &self.allowed {
            Some(allowed) if !allowed.contains(value) => {
                Err(AqlError::invalid_value(operation, &self.name, allowed, value))
            }
            _ => Ok(()),
        }
    }

    /// The introspection `ParameterInfo` for this parameter.
    pub fn info(&self) -> Value {
        let mut info = Map::new();
        info.insert("name".into(), self.name.clone().into());
        info.insert("type".into(), self.ty.name().into());
        info.insert("required".into(), self.required.into());
        let description = match self.aliases.as_slice() {
            [] => self.description.clone(),
            aliases => format!("{} (also accepted as {})", self.description, aliases.join(", ")),
        };
        info.insert("description".into(), description.into());
        if let Some(default) = &self.default {
            info.insert("default".into(), default.clone());
        }
        if let Some(allowed) = &self.allowed {
            info.insert("enum".into(), allowed.clone().into());
        }
        Value::Object(info)
    }
}
