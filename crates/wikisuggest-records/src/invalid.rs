//! The one error of a parameter check: which parameter, and what is wrong with its value.

use std::fmt;

/// A parameter that makes no sense, named as the caller spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidParameter {
    /// The parameter's name (`threshold`, `page_title`, ...).
    pub name: String,
    /// What is wrong with its value.
    pub message: String,
}

impl InvalidParameter {
    pub fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for InvalidParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: {}", self.name, self.message)
    }
}

impl std::error::Error for InvalidParameter {}

pub type Checked<T = ()> = Result<T, InvalidParameter>;
