//! Reference-data codes (projects, organizations, types, …): normalization and the
//! character rules of docs/rules/numbering.md#reference-data-and-codes that keep rendered numbers unambiguous.

use unicode_normalization::UnicodeNormalization;

/// Longest code, in Unicode characters (not bytes: Thai codes are 3 bytes a character).
pub const MAX_CODE_LEN: usize = 20;

/// Which rules apply: project codes may contain `-`, all other codes may not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeKind {
    Project,
    /// Organizations, correspondence types, sub-types, RFA types, disciplines.
    Party,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    #[error("the code is empty")]
    Empty,
    #[error("the code is {len} characters long; the maximum is {}", MAX_CODE_LEN)]
    TooLong { len: usize },
    #[error("the code may not contain white space")]
    Whitespace,
    #[error("the code may not contain {ch:?}: it separates the parts of a document number")]
    ForbiddenChar { ch: char },
    #[error("the code may not contain control characters")]
    ControlChar,
}

impl CodeError {
    pub fn message_th(&self) -> String {
        match self {
            CodeError::Empty => "ต้องระบุรหัส".into(),
            CodeError::TooLong { len } => {
                format!("รหัสยาว {len} อักขระ เกินกำหนด {MAX_CODE_LEN} อักขระ")
            }
            CodeError::Whitespace => "รหัสต้องไม่มีช่องว่าง".into(),
            CodeError::ForbiddenChar { ch } => {
                format!("รหัสต้องไม่มีอักขระ '{ch}' เพราะใช้คั่นส่วนต่าง ๆ ของเลขที่เอกสาร")
            }
            CodeError::ControlChar => "รหัสต้องไม่มีอักขระควบคุม".into(),
        }
    }
}

/// Trim and NFC-normalize: the form codes are stored and compared in.
pub fn normalize_code(s: &str) -> String {
    s.trim().nfc().collect()
}

/// Normalizes `raw` and checks it; returns the normalized code.
pub fn validate_code(kind: CodeKind, raw: &str) -> Result<String, CodeError> {
    let code = normalize_code(raw);
    if code.is_empty() {
        return Err(CodeError::Empty);
    }
    let len = code.chars().count();
    if len > MAX_CODE_LEN {
        return Err(CodeError::TooLong { len });
    }
    for ch in code.chars() {
        if ch.is_whitespace() {
            return Err(CodeError::Whitespace);
        }
        if ch.is_control() {
            return Err(CodeError::ControlChar);
        }
        if matches!(ch, '/' | '{' | '}') || (ch == '-' && kind == CodeKind::Party) {
            return Err(CodeError::ForbiddenChar { ch });
        }
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_to_trimmed_nfc() {
        // "e" + combining acute (NFD) becomes the single precomposed character
        assert_eq!(normalize_code("  Cafe\u{301} "), "Caf\u{e9}");
        assert_eq!(normalize_code("\tคคง.\n"), "คคง.");
    }

    #[test]
    fn accepts_the_demo_codes() {
        for c in ["คคง.", "สคฉ.3", "ผรม.1", "กทท.", "TRANSMITTAL", "21", "RPT"] {
            assert_eq!(validate_code(CodeKind::Party, c), Ok(c.to_string()));
        }
        assert_eq!(validate_code(CodeKind::Project, " LCBP3-C2 "), Ok("LCBP3-C2".into()));
    }

    #[test]
    fn rejects_separators_and_empty() {
        use CodeKind::*;
        assert_eq!(validate_code(Party, "   "), Err(CodeError::Empty));
        assert_eq!(validate_code(Party, "A-B"), Err(CodeError::ForbiddenChar { ch: '-' }));
        assert_eq!(validate_code(Project, "A/B"), Err(CodeError::ForbiddenChar { ch: '/' }));
        assert_eq!(validate_code(Party, "A{B"), Err(CodeError::ForbiddenChar { ch: '{' }));
        assert_eq!(validate_code(Project, "A}B"), Err(CodeError::ForbiddenChar { ch: '}' }));
        assert_eq!(validate_code(Project, "คค ง"), Err(CodeError::Whitespace));
        assert_eq!(validate_code(Party, "ค\u{a0}ง"), Err(CodeError::Whitespace));
        assert_eq!(validate_code(Party, "A\u{7}"), Err(CodeError::ControlChar));
    }

    #[test]
    fn length_counts_characters_not_bytes() {
        let twenty = "ก".repeat(20); // 60 bytes
        assert_eq!(validate_code(CodeKind::Party, &twenty), Ok(twenty.clone()));
        let long = "ก".repeat(21);
        assert_eq!(validate_code(CodeKind::Party, &long), Err(CodeError::TooLong { len: 21 }));
        assert!(CodeError::TooLong { len: 21 }.message_th().contains("21"));
        assert!(CodeError::ForbiddenChar { ch: '-' }.to_string().contains("'-'"));
    }
}
