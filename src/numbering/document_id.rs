//! The document id a number is confirmed for: trimmed, 1–100 characters, no control characters. Parsed once
//! where a request enters; past that point it is a `DocumentId`, not a string to check again.

use std::fmt;

/// Most characters (not bytes) a document id has.
pub const MAX_DOCUMENT_ID_CHARS: usize = 100;

/// Travels (between instances: a forwarded counter job) as its text, parsed again on arrival.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DocumentId(String);

/// Why a text is not a document id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentIdError {
    /// Nothing but white space.
    Empty,
    /// More than [`MAX_DOCUMENT_ID_CHARS`] characters.
    TooLong,
    /// A control character (a line break, a tab, …).
    Control,
}

impl DocumentId {
    pub fn parse(text: &str) -> Result<DocumentId, DocumentIdError> {
        let d = text.trim();
        if d.is_empty() {
            return Err(DocumentIdError::Empty);
        }
        if d.chars().count() > MAX_DOCUMENT_ID_CHARS {
            return Err(DocumentIdError::TooLong);
        }
        if d.chars().any(char::is_control) {
            return Err(DocumentIdError::Control);
        }
        Ok(DocumentId(d.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DocumentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for DocumentId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for DocumentId {
    type Error = DocumentIdError;
    fn try_from(text: String) -> Result<DocumentId, DocumentIdError> {
        DocumentId::parse(&text)
    }
}

impl fmt::Display for DocumentIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DocumentIdError::Empty => "an empty document id",
            DocumentIdError::TooLong => "a document id longer than 100 characters",
            DocumentIdError::Control => "a document id with a control character",
        })
    }
}

impl From<DocumentId> for String {
    fn from(d: DocumentId) -> String {
        d.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_keeps_the_text() {
        let d = DocumentId::parse("  DOC-2568/001 ").unwrap();
        assert_eq!(d.as_str(), "DOC-2568/001");
        assert_eq!(d.to_string(), "DOC-2568/001");
        assert_eq!(String::from(d), "DOC-2568/001");
        assert_eq!(DocumentId::parse("หนังสือ ๑").unwrap().as_str(), "หนังสือ ๑");
    }

    #[test]
    fn refuses_empty_long_and_control_text() {
        assert_eq!(DocumentId::parse(""), Err(DocumentIdError::Empty));
        assert_eq!(DocumentId::parse(" \t "), Err(DocumentIdError::Empty));
        assert_eq!(DocumentId::parse("a\nb"), Err(DocumentIdError::Control));
        assert_eq!(DocumentId::parse(&"x".repeat(101)), Err(DocumentIdError::TooLong));
    }

    #[test]
    fn counts_characters_not_bytes() {
        let thai = "ก".repeat(MAX_DOCUMENT_ID_CHARS);
        assert!(thai.len() > MAX_DOCUMENT_ID_CHARS);
        assert_eq!(DocumentId::parse(&thai).unwrap().as_str(), thai);
        assert_eq!(DocumentId::parse(&format!("{thai}ก")), Err(DocumentIdError::TooLong));
    }
}
