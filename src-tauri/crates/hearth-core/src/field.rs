//! A value the user gave that is refused, with the field it concerns, so a window can mark that
//! field instead of guessing it from the words.

use serde::Serialize;
use ts_rs::TS;

use crate::SamplingError;

/// Why a settings value is refused. `field` is the field's name as the window knows it (the
/// camelCase JSON name, e.g. `topP`, `nCtx`, `baseUrl`); a rule spanning fields names each,
/// comma-separated (`kvCacheType,flashAttention`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), message: message.into() }
    }

    /// The fields it concerns, one or more.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.field.split(',')
    }
}

impl From<SamplingError> for FieldError {
    fn from(e: SamplingError) -> Self {
        FieldError::new(e.field, e.to_string())
    }
}
