//! Numbering templates (docs/rules/numbering.md#validation): parse, validate, render, and read a rendered number back.
//!
//! Why numbers read back unambiguously: party codes cannot contain `-`, `/`, white space or
//! braces, and the validator requires one of `-`, `/`, space in the literal text between any
//! two variable-width tokens. So the first such separator after a variable token ends it, and
//! what lies between is literal text and fixed-width tokens of known length. `{PROJECT}` may
//! contain `-` but is matched against the known project code. Hence a number determines every
//! part it shows, and two counters (which differ in a shown part or period) never collide.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::codes::{normalize_code, MAX_CODE_LEN};
use super::period::ResetScope;
use super::revision::MAX_REV_LEN;

/// The contract code the live preview shows when the project has no contract yet.
pub const SAMPLE_CONTRACT_CODE: &str = "C1";

/// Longest template text and longest rendered number, in characters.
pub const MAX_NUMBER_LEN: usize = 100;
const MAX_SEQ_WIDTH: u8 = 10;
/// Longest sub-type number assumed when bounding the rendered length.
const MAX_SUB_TYPE_DIGITS: usize = 5;
/// `parse_number` refuses longer input outright, so hostile text cannot make it slow.
const MAX_PARSE_INPUT: usize = 4 * MAX_NUMBER_LEN;
/// Search steps `parse_number` may take (only ambiguous, unvalidated templates come near it).
const PARSE_BUDGET: u32 = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Token {
    Project,
    Originator,
    Recipient,
    CorrType,
    SubType,
    RfaType,
    Discipline,
    /// `{CONTRACT}`: the code of the request's contract within the project.
    Contract,
    /// `{SEQ:n}`, zero-padded to n digits.
    Seq(u8),
    YearBe,
    YearAd,
    /// `{FY:BE}`: the fiscal year, by the B.E. year in which it ends.
    FyBe,
    /// `{FY:CE}`: the same fiscal year in A.D.
    FyAd,
    Month,
    Rev,
}

impl Token {
    /// Tokens that always render to the same number of characters (digits only).
    pub fn is_fixed_width(&self) -> bool {
        matches!(self, Token::Seq(_) | Token::YearBe | Token::YearAd | Token::FyBe | Token::FyAd | Token::Month)
    }

    /// Canonical spelling, e.g. `{SEQ:4}`, `{YEAR:B.E.}`.
    pub fn name(&self) -> String {
        match self {
            Token::Seq(n) => format!("{{SEQ:{n}}}"),
            t => format!("{{{}}}", t.plain_name()),
        }
    }

    fn plain_name(&self) -> &'static str {
        match self {
            Token::Project => "PROJECT",
            Token::Originator => "ORIGINATOR",
            Token::Recipient => "RECIPIENT",
            Token::CorrType => "CORR_TYPE",
            Token::SubType => "SUB_TYPE",
            Token::RfaType => "RFA_TYPE",
            Token::Discipline => "DISCIPLINE",
            Token::Contract => "CONTRACT",
            Token::Seq(_) => "SEQ",
            Token::YearBe => "YEAR:B.E.",
            Token::YearAd => "YEAR:A.D.",
            Token::FyBe => "FY:BE",
            Token::FyAd => "FY:CE",
            Token::Month => "MONTH",
            Token::Rev => "REV",
        }
    }

    /// Longest rendering, in characters.
    fn max_len(&self) -> usize {
        match self {
            Token::Seq(n) => usize::from(*n),
            Token::YearBe | Token::YearAd | Token::FyBe | Token::FyAd => 4,
            Token::Month => 2,
            Token::Rev => MAX_REV_LEN,
            Token::SubType => MAX_SUB_TYPE_DIGITS,
            _ => MAX_CODE_LEN,
        }
    }

    fn is_year(&self) -> bool {
        matches!(self, Token::YearBe | Token::YearAd)
    }

    fn is_fiscal_year(&self) -> bool {
        matches!(self, Token::FyBe | Token::FyAd)
    }

    /// `inner` is the text between the braces (exact case); `position` that of `{`.
    fn from_inner(inner: &str, position: usize) -> Result<Token, TemplateError> {
        let braced = || format!("{{{inner}}}");
        Ok(match inner {
            "PROJECT" => Token::Project,
            "ORIGINATOR" => Token::Originator,
            "RECIPIENT" => Token::Recipient,
            "CORR_TYPE" => Token::CorrType,
            "SUB_TYPE" => Token::SubType,
            "RFA_TYPE" => Token::RfaType,
            "DISCIPLINE" => Token::Discipline,
            "CONTRACT" => Token::Contract,
            "YEAR:B.E." | "YEAR:BE" => Token::YearBe,
            "YEAR:A.D." | "YEAR:CE" => Token::YearAd,
            "FY:BE" | "FY:B.E." => Token::FyBe,
            "FY:CE" | "FY:A.D." => Token::FyAd,
            "MONTH" => Token::Month,
            "REV" => Token::Rev,
            "SEQ" => return Err(TemplateError::SeqWithoutWidth { position }),
            _ if inner.trim().is_empty() => return Err(TemplateError::EmptyToken { position }),
            _ => {
                if let Some(width) = inner.strip_prefix("SEQ:") {
                    // digits only: `str::parse` would also accept "+4"
                    return match width.parse::<u8>() {
                        Ok(n) if width.bytes().all(|b| b.is_ascii_digit()) && (1..=MAX_SEQ_WIDTH).contains(&n) => Ok(Token::Seq(n)),
                        _ => Err(TemplateError::SeqWidthOutOfRange { width: width.to_string(), position }),
                    };
                }
                if inner == "YEAR" || inner.starts_with("YEAR:") || inner == "FY" || inner.starts_with("FY:") {
                    return Err(TemplateError::UnknownYearFormat { name: braced(), position });
                }
                let replacement = match inner {
                    "ORG" => "{ORIGINATOR}",
                    "TYPE" => "{CORR_TYPE}",
                    "CATEGORY" => "{SUB_TYPE} or {RFA_TYPE}",
                    _ => return Err(TemplateError::UnknownToken { name: braced(), position }),
                };
                return Err(TemplateError::DeprecatedToken { name: braced(), replacement: replacement.into(), position });
            }
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    Token(Token),
}

/// A syntactically valid template. Obtain it from [`Template::parse`] (syntax only) or
/// [`Template::validate`] (every rule of docs/rules/numbering.md#validation; use this before issuing numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    source: String,
    segments: Vec<Segment>,
}

/// A template travels (a forwarded counter job, see the server's `numbering::forward`) as its source text and is
/// parsed again on arrival: the segments follow from the text.
impl Serialize for Template {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Template, D::Error> {
        let source = String::deserialize(d)?;
        Template::parse(&source).map_err(|errors| serde::de::Error::custom(errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")))
    }
}

/// Which parties a template shows, i.e. which are part of its counter key (docs/rules/numbering.md#counter-keys).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeyParts {
    pub originator: bool,
    pub recipient: bool,
    pub sub_type: bool,
    pub rfa_type: bool,
    pub discipline: bool,
}

/// Positions are 0-based character (not byte) indexes into the template text; the messages
/// show them 1-based ("character 7") for people.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unknown token {name} at character {}{}", .position + 1, case_hint(.name))]
    UnknownToken { name: String, position: usize },
    #[error("{name} (character {}) is no longer supported: use {replacement} instead", .position + 1)]
    DeprecatedToken { name: String, replacement: String, position: usize },
    #[error("{name} (character {}) needs a year format: use {} (Buddhist era) or {}", .position + 1, year_formats(.name).0, year_formats(.name).1)]
    UnknownYearFormat { name: String, position: usize },
    #[error("unbalanced brace at character {}", .position + 1)]
    UnbalancedBrace { position: usize },
    #[error("empty braces at character {}", .position + 1)]
    EmptyToken { position: usize },
    #[error("{{SEQ}} at character {} needs a width, e.g. {{SEQ:4}}", .position + 1)]
    SeqWithoutWidth { position: usize },
    #[error("{{SEQ:{width}}} at character {}: the width must be a whole number from 1 to 10", .position + 1)]
    SeqWidthOutOfRange { width: String, position: usize },
    #[error("the template needs one running number {{SEQ:n}}, e.g. {{SEQ:4}}")]
    MissingSeq,
    #[error("the template may contain only one {{SEQ:n}}")]
    MultipleSeq,
    #[error("{first} and {second} (character {}) must be separated by text containing '-', '/' or a space, otherwise a number cannot be read back unambiguously", .position + 1)]
    AmbiguousAdjacentTokens { first: String, second: String, position: usize },
    #[error("{correspondence_type} templates must contain {token}")]
    MissingRequiredToken { token: String, correspondence_type: String },
    #[error("the template is {len} characters long; the maximum is 100")]
    TooLong { len: usize },
    #[error("the longest number this template can render (codes of {} characters) exceeds {max_len} characters", MAX_CODE_LEN)]
    RenderTooLong { max_len: usize },
    #[error("{}", reset_needs_year_en(.scope))]
    ResetNeedsYear { scope: ResetScope },
    #[error(
        "with a contract reset every contract has a running number of its own, so the template must show {{CONTRACT}}; \
         otherwise the numbers of two contracts would look alike. Add the missing token, or choose reset NONE"
    )]
    ResetNeedsContract,
}

fn case_hint(name: &str) -> String {
    let inner = name.trim_start_matches('{').trim_end_matches('}');
    match Token::from_inner(&inner.to_uppercase(), 0) {
        Ok(t) => format!(" (token names are upper case: {})", t.name()),
        Err(_) => String::new(),
    }
}

/// The two spellings of a year token named like `name` (`{FY…}` or `{YEAR…}`).
fn year_formats(name: &str) -> (&'static str, &'static str) {
    if name.starts_with("{FY") {
        ("{FY:BE}", "{FY:CE}")
    } else {
        ("{YEAR:B.E.}", "{YEAR:A.D.}")
    }
}

fn reset_needs_year_en(scope: &ResetScope) -> String {
    let (period, needs) = match scope {
        ResetScope::Monthly => ("month", "the year ({YEAR:B.E.} or {YEAR:A.D.}) and {MONTH}"),
        ResetScope::FiscalYear => ("fiscal year", "the fiscal year ({FY:BE} or {FY:CE})"),
        _ => ("year", "the year ({YEAR:B.E.} or {YEAR:A.D.})"),
    };
    format!(
        "with a {} reset the running number starts again at 1 every {period}, so the template must show {needs}; \
         otherwise the numbers would repeat after the reset. Add the missing token, or choose reset NONE",
        scope.as_str().to_lowercase()
    )
}

impl TemplateError {
    pub fn position(&self) -> Option<usize> {
        use TemplateError::*;
        match self {
            UnknownToken { position, .. }
            | DeprecatedToken { position, .. }
            | UnknownYearFormat { position, .. }
            | UnbalancedBrace { position }
            | EmptyToken { position }
            | SeqWithoutWidth { position }
            | SeqWidthOutOfRange { position, .. }
            | AmbiguousAdjacentTokens { position, .. } => Some(*position),
            MissingSeq
            | MultipleSeq
            | MissingRequiredToken { .. }
            | TooLong { .. }
            | RenderTooLong { .. }
            | ResetNeedsYear { .. }
            | ResetNeedsContract => None,
        }
    }

    /// The message shown to people (Thai).
    pub fn message_th(&self) -> String {
        use TemplateError::*;
        let at = |p: &usize| format!("(อักขระที่ {})", p + 1);
        match self {
            UnknownToken { name, position } => {
                let hint = match case_hint(name) {
                    h if h.is_empty() => h,
                    _ => format!(" ชื่อโทเคนต้องเป็นตัวพิมพ์ใหญ่ เช่น {}", name.to_uppercase()),
                };
                format!("ไม่รู้จักโทเคน {name} {}{hint}", at(position))
            }
            DeprecatedToken { name, replacement, position } => {
                format!("โทเคน {name} {} เลิกใช้แล้ว ให้ใช้ {} แทน", at(position), replacement.replace(" or ", " หรือ "))
            }
            UnknownYearFormat { name, position } => {
                let (be, ad) = year_formats(name);
                format!("{name} {} ต้องระบุรูปแบบปี: ใช้ {be} (พ.ศ.) หรือ {ad} (ค.ศ.)", at(position))
            }
            UnbalancedBrace { position } => format!("วงเล็บปีกกา {{ }} ไม่ครบคู่ {}", at(position)),
            EmptyToken { position } => format!("วงเล็บปีกกาว่าง ไม่มีชื่อโทเคน {}", at(position)),
            SeqWithoutWidth { position } => {
                format!("{{SEQ}} {} ต้องระบุจำนวนหลัก เช่น {{SEQ:4}}", at(position))
            }
            SeqWidthOutOfRange { width, position } => format!("{{SEQ:{width}}} {} จำนวนหลักต้องเป็นตัวเลข 1 ถึง 10", at(position)),
            MissingSeq => "รูปแบบต้องมีเลขลำดับ {SEQ:n} หนึ่งตัว เช่น {SEQ:4}".into(),
            MultipleSeq => "รูปแบบมีเลขลำดับ {SEQ:n} ได้เพียงตัวเดียว".into(),
            AmbiguousAdjacentTokens { first, second, position } => format!(
                "{first} และ {second} {} ต้องคั่นด้วยข้อความที่มีเครื่องหมาย - หรือ / หรือช่องว่าง \
                 มิฉะนั้นจะแยกส่วนของเลขที่เอกสารกลับไม่ได้อย่างชัดเจน",
                at(position)
            ),
            MissingRequiredToken { token, correspondence_type } => {
                format!("รูปแบบของเอกสารประเภท {correspondence_type} ต้องมี {token}")
            }
            TooLong { len } => format!("รูปแบบยาว {len} อักขระ เกินกำหนด {MAX_NUMBER_LEN} อักขระ"),
            RenderTooLong { max_len } => format!("เลขที่เอกสารที่ยาวที่สุดจากรูปแบบนี้ (เมื่อรหัสยาว {MAX_CODE_LEN} อักขระ) จะเกิน {max_len} อักขระ"),
            ResetNeedsYear { scope: ResetScope::Monthly } => "การเริ่มเลขใหม่ทุกเดือนจะทำให้เลขลำดับกลับไปเริ่มที่ 1 ทุกเดือน \
                 รูปแบบจึงต้องแสดงปี ({YEAR:B.E.} หรือ {YEAR:A.D.}) และเดือน ({MONTH}) มิฉะนั้นเลขที่เอกสารจะซ้ำกับของเดือนก่อน \
                 แก้ไขโดยเพิ่มโทเคนที่ขาด หรือเลือกการเริ่มเลขใหม่แบบ NONE (ไม่เริ่มใหม่)"
                .into(),
            ResetNeedsYear { scope: ResetScope::FiscalYear } => "การเริ่มเลขใหม่ทุกปีงบประมาณจะทำให้เลขลำดับกลับไปเริ่มที่ 1 ทุกปีงบประมาณ \
                 รูปแบบจึงต้องแสดงปีงบประมาณ ({FY:BE} หรือ {FY:CE}) มิฉะนั้นเลขที่เอกสารจะซ้ำกับของปีงบประมาณก่อน \
                 แก้ไขโดยเพิ่มโทเคนปีงบประมาณ หรือเลือกการเริ่มเลขใหม่แบบ NONE (ไม่เริ่มใหม่)"
                .into(),
            ResetNeedsContract => "การนับเลขแยกตามสัญญาทำให้แต่ละสัญญามีเลขลำดับของตนเอง \
                 รูปแบบจึงต้องแสดงรหัสสัญญา ({CONTRACT}) มิฉะนั้นเลขที่เอกสารของสองสัญญาจะซ้ำกัน \
                 แก้ไขโดยเพิ่มโทเคน {CONTRACT} หรือเลือกการเริ่มเลขใหม่แบบ NONE (ไม่เริ่มใหม่)"
                .into(),
            ResetNeedsYear { .. } => "การเริ่มเลขใหม่ทุกปีจะทำให้เลขลำดับกลับไปเริ่มที่ 1 ทุกปี \
                 รูปแบบจึงต้องแสดงปี ({YEAR:B.E.} หรือ {YEAR:A.D.}) มิฉะนั้นเลขที่เอกสารจะซ้ำกับของปีก่อน \
                 แก้ไขโดยเพิ่มโทเคนปี หรือเลือกการเริ่มเลขใหม่แบบ NONE (ไม่เริ่มใหม่)"
                .into(),
        }
    }
}

/// What a rendered number is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderValues<'a> {
    pub project: &'a str,
    pub originator: &'a str,
    pub recipient: &'a str,
    pub correspondence_type: &'a str,
    /// The sub-type number as text, e.g. "21".
    pub sub_type: &'a str,
    pub rfa_type: &'a str,
    pub discipline: &'a str,
    /// The contract's code, for `{CONTRACT}`.
    pub contract: &'a str,
    pub seq: u64,
    /// A.D.
    pub year: i32,
    pub month: u32,
    /// A.D. year in which the fiscal year ends.
    pub fiscal_year: i32,
    pub rev: &'a str,
}

/// The parts read back from a number; a field is `Some` exactly when the template shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedNumber {
    pub originator: Option<String>,
    pub recipient: Option<String>,
    pub correspondence_type: Option<String>,
    pub sub_type: Option<String>,
    pub rfa_type: Option<String>,
    pub discipline: Option<String>,
    pub contract: Option<String>,
    pub seq: u64,
    /// A.D.
    pub year: Option<i32>,
    pub month: Option<u32>,
    /// A.D. year in which the fiscal year ends.
    pub fiscal_year: Option<i32>,
    pub rev: Option<String>,
}

/// Scanner output; `Bad` stands where an invalid token was, so later checks neither see it
/// nor treat its neighbours as adjacent.
enum Piece {
    Lit(String),
    Tok(Token, usize),
    Bad,
}

fn scan(src: &str) -> (Vec<Piece>, Vec<TemplateError>) {
    let chars: Vec<char> = src.chars().collect();
    let (mut pieces, mut errors, mut lit) = (Vec::new(), Vec::new(), String::new());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '{' => {
                let close = chars[i + 1..].iter().position(|&c| c == '{' || c == '}').map(|k| i + 1 + k);
                let Some(j) = close.filter(|&j| chars[j] == '}') else {
                    // unclosed: report it and read on from the next character
                    errors.push(TemplateError::UnbalancedBrace { position: i });
                    i += 1;
                    continue;
                };
                if !lit.is_empty() {
                    pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                let inner: String = chars[i + 1..j].iter().collect();
                match Token::from_inner(&inner, i) {
                    Ok(t) => pieces.push(Piece::Tok(t, i)),
                    Err(e) => {
                        errors.push(e);
                        pieces.push(Piece::Bad);
                    }
                }
                i = j + 1;
            }
            '}' => {
                errors.push(TemplateError::UnbalancedBrace { position: i });
                i += 1;
            }
            c => {
                lit.push(c);
                i += 1;
            }
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    (pieces, errors)
}

/// Characters no code other than the project's may contain (docs/rules/numbering.md#reference-data-and-codes).
fn is_separator(c: char) -> bool {
    c == '-' || c == '/' || c.is_whitespace()
}

impl Template {
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Syntax only: braces, token names, `{SEQ:n}` width. Returns every error found.
    pub fn parse(src: &str) -> Result<Template, Vec<TemplateError>> {
        let (pieces, errors) = scan(src);
        if !errors.is_empty() {
            return Err(errors);
        }
        let segments = pieces
            .into_iter()
            .filter_map(|p| match p {
                Piece::Lit(s) => Some(Segment::Literal(s)),
                Piece::Tok(t, _) => Some(Segment::Token(t)),
                Piece::Bad => None,
            })
            .collect();
        Ok(Template { source: src.to_string(), segments })
    }

    /// Every rule of docs/rules/numbering.md#validation for a template of correspondence type `correspondence_type_code` (empty for a
    /// project default) with reset scope `reset`. Returns all errors, so an editor can list them.
    pub fn validate(src: &str, correspondence_type_code: &str, reset: ResetScope) -> Result<Template, Vec<TemplateError>> {
        let (pieces, mut errors) = scan(src);
        let tokens: Vec<(Token, usize)> = pieces.iter().filter_map(|p| if let Piece::Tok(t, pos) = p { Some((*t, *pos)) } else { None }).collect();
        let shows = |f: fn(&Token) -> bool| tokens.iter().any(|(t, _)| f(t));
        // a mistyped {SEQ…} or {YEAR…} is already reported; do not also call it missing
        let typo = |f: fn(&TemplateError) -> bool| errors.iter().any(f);
        let seq_typo = typo(|e| matches!(e, TemplateError::SeqWithoutWidth { .. } | TemplateError::SeqWidthOutOfRange { .. }));
        let year_typo = typo(|e| matches!(e, TemplateError::UnknownYearFormat { .. }));

        let len = src.chars().count();
        if len > MAX_NUMBER_LEN {
            errors.push(TemplateError::TooLong { len });
        }

        match tokens.iter().filter(|(t, _)| matches!(t, Token::Seq(_))).count() {
            0 if !seq_typo => errors.push(TemplateError::MissingSeq),
            0 | 1 => {}
            _ => errors.push(TemplateError::MultipleSeq),
        }

        // literal text between consecutive variable-width tokens must contain a separator;
        // fixed-width tokens in between do not separate (codes may contain digits)
        let mut prev: Option<Token> = None;
        let mut between = String::new();
        for piece in &pieces {
            match piece {
                Piece::Lit(s) => between.push_str(s),
                Piece::Tok(t, _) if t.is_fixed_width() => {}
                Piece::Tok(t, pos) => {
                    if let Some(p) = prev.filter(|_| !between.chars().any(is_separator)) {
                        errors.push(TemplateError::AmbiguousAdjacentTokens { first: p.name(), second: t.name(), position: *pos });
                    }
                    prev = Some(*t);
                    between.clear();
                }
                Piece::Bad => prev = None,
            }
        }

        let required: &[Token] = match normalize_code(correspondence_type_code).as_str() {
            "RFA" => &[Token::Project, Token::Discipline],
            "TRANSMITTAL" => &[Token::SubType],
            _ => &[],
        };
        for req in required {
            if !tokens.iter().any(|(t, _)| t == req) {
                errors.push(TemplateError::MissingRequiredToken { token: req.name(), correspondence_type: normalize_code(correspondence_type_code) });
            }
        }

        let longest: usize = pieces
            .iter()
            .map(|p| match p {
                Piece::Lit(s) => s.chars().count(),
                Piece::Tok(t, _) => t.max_len(),
                Piece::Bad => 0,
            })
            .sum();
        if longest > MAX_NUMBER_LEN {
            errors.push(TemplateError::RenderTooLong { max_len: MAX_NUMBER_LEN });
        }

        // a reset restarts the sequence, so the period must be visible or numbers repeat
        let has_year = shows(Token::is_year);
        let has_month = shows(|t| *t == Token::Month);
        // a calendar year does not tell two fiscal years apart (each spans two), nor the other way round
        let needs_year = match reset {
            ResetScope::Yearly => !has_year && !year_typo,
            ResetScope::Monthly => (!has_year && !year_typo) || !has_month,
            ResetScope::FiscalYear => !shows(Token::is_fiscal_year) && !year_typo,
            ResetScope::None | ResetScope::Contract => false,
        };
        if needs_year {
            errors.push(TemplateError::ResetNeedsYear { scope: reset });
        }
        // each contract restarts at 1, so the contract must be visible or two contracts' numbers coincide
        if reset == ResetScope::Contract && !shows(|t| *t == Token::Contract) {
            errors.push(TemplateError::ResetNeedsContract);
        }

        if errors.is_empty() {
            Template::parse(src)
        } else {
            Err(errors)
        }
    }

    fn tokens(&self) -> impl Iterator<Item = Token> + '_ {
        self.segments.iter().filter_map(|s| if let Segment::Token(t) = s { Some(*t) } else { None })
    }

    /// Whether the template shows `{CONTRACT}`: a request numbered with it must name a contract.
    pub fn shows_contract(&self) -> bool {
        self.tokens().any(|t| t == Token::Contract)
    }

    /// Whether numbering under this template with `scope` stays on the counters of `other` with `other_scope`:
    /// the same parts of the counter key and the same reset scope. A change that does not keep them starts new
    /// counters, which the editor and the server both make the user acknowledge (docs/rules/numbering.md#validation).
    pub fn keeps_counters_of(&self, scope: ResetScope, other: &Template, other_scope: ResetScope) -> bool {
        self.key_parts() == other.key_parts() && scope == other_scope
    }

    pub fn key_parts(&self) -> KeyParts {
        let mut k = KeyParts::default();
        for t in self.tokens() {
            match t {
                Token::Originator => k.originator = true,
                Token::Recipient => k.recipient = true,
                Token::SubType => k.sub_type = true,
                Token::RfaType => k.rfa_type = true,
                Token::Discipline => k.discipline = true,
                _ => {}
            }
        }
        k
    }

    /// Width of `{SEQ:n}`; 0 if the template has none (only possible for an unvalidated one).
    pub fn seq_width(&self) -> u8 {
        self.tokens().find_map(|t| if let Token::Seq(n) = t { Some(n) } else { None }).unwrap_or(0)
    }

    /// Largest sequence number the template can show: 10^width − 1.
    pub fn max_seq(&self) -> u64 {
        10u64.pow(u32::from(self.seq_width())) - 1
    }

    /// Renders a number. The caller guarantees `v.seq <= self.max_seq()`.
    pub fn render(&self, v: &RenderValues) -> String {
        let mut out = String::new();
        for seg in &self.segments {
            let t = match seg {
                Segment::Literal(s) => {
                    out.push_str(s);
                    continue;
                }
                Segment::Token(t) => t,
            };
            // writing to a String cannot fail
            let _ = match t {
                Token::Project => write!(out, "{}", v.project),
                Token::Originator => write!(out, "{}", v.originator),
                Token::Recipient => write!(out, "{}", v.recipient),
                Token::CorrType => write!(out, "{}", v.correspondence_type),
                Token::SubType => write!(out, "{}", v.sub_type),
                Token::RfaType => write!(out, "{}", v.rfa_type),
                Token::Discipline => write!(out, "{}", v.discipline),
                Token::Contract => write!(out, "{}", v.contract),
                Token::Seq(n) => write!(out, "{:0width$}", v.seq, width = usize::from(*n)),
                Token::YearBe => write!(out, "{}", v.year + 543),
                Token::YearAd => write!(out, "{}", v.year),
                Token::FyBe => write!(out, "{}", v.fiscal_year + 543),
                Token::FyAd => write!(out, "{}", v.fiscal_year),
                Token::Month => write!(out, "{:02}", v.month),
                Token::Rev => write!(out, "{}", v.rev),
            };
        }
        out
    }

    /// Reads a rendered number back. `{PROJECT}` must equal `project_code`. Returns `Some` only
    /// if exactly one reading exists (a token shown twice must read the same both times).
    pub fn parse_number(&self, text: &str, project_code: &str) -> Option<ParsedNumber> {
        let text: Vec<char> = text.chars().collect();
        if text.len() > MAX_PARSE_INPUT {
            return None;
        }
        let pats = self
            .segments
            .iter()
            .map(|s| match s {
                Segment::Literal(l) => Pat::Lit(l.chars().collect()),
                Segment::Token(t) => Pat::Tok(*t),
            })
            .collect();
        let mut r = Reader { pats, text, project: project_code.chars().collect(), reach: Vec::new(), budget: PARSE_BUDGET, found: Vec::new() };
        r.compute_reach();
        r.search(0, 0, &mut Default::default());
        (r.found.len() == 1 && r.budget > 0).then(|| r.found.remove(0))
    }
}

enum Pat {
    Lit(Vec<char>),
    Tok(Token),
}

/// A value read for a token: a span of the text, or a number (A.D. year for both year tokens).
#[derive(Clone, Copy)]
enum Val {
    Span(usize, usize),
    Num(i64),
}

/// One slot per kind of shown value (both year tokens share the A.D. year slot, so a template
/// showing both must read consistent years). `{PROJECT}` has none: it is checked, not read.
fn slot(t: Token) -> Option<usize> {
    Some(match t {
        Token::Originator => 0,
        Token::Recipient => 1,
        Token::CorrType => 2,
        Token::SubType => 3,
        Token::RfaType => 4,
        Token::Discipline => 5,
        Token::Rev => 6,
        Token::Seq(_) => 7,
        Token::YearBe | Token::YearAd => 8,
        Token::Month => 9,
        Token::FyBe | Token::FyAd => 10,
        Token::Contract => 11,
        Token::Project => return None,
    })
}

type Slots = [Option<Val>; 12];

/// Backtracking reader. `reach[i][p]` (can segments i.. match text[p..], ignoring repeated-token
/// agreement) prunes every dead branch, so the search only walks complete readings.
struct Reader {
    pats: Vec<Pat>,
    text: Vec<char>,
    project: Vec<char>,
    reach: Vec<Vec<bool>>,
    budget: u32,
    found: Vec<ParsedNumber>,
}

impl Reader {
    fn digits(&self, p: usize, n: usize) -> Option<i64> {
        let s = self.text.get(p..p + n)?;
        s.iter().map(|c| c.to_digit(10).filter(|_| c.is_ascii_digit())).try_fold(0, |a, d| Some(a * 10 + i64::from(d?)))
    }

    /// The value fixed-width token `t` reads at `p`, if the text there fits it.
    fn fixed(&self, t: Token, p: usize) -> Option<i64> {
        let n = self.digits(p, t.max_len())?;
        match t {
            Token::YearBe | Token::FyBe => Some(n - 543),
            Token::Month if !(1..=12).contains(&n) => None,
            _ => Some(n),
        }
    }

    /// The end positions segment `i` can have when it starts at `p` (empty if none).
    fn ends(&self, i: usize, p: usize) -> std::ops::Range<usize> {
        let text = &self.text[p..];
        let exact = |l: &[char]| {
            if !l.is_empty() && text.starts_with(l) {
                p + l.len()..p + l.len() + 1
            } else {
                p..p
            }
        };
        match &self.pats[i] {
            Pat::Lit(l) => exact(l),
            Pat::Tok(Token::Project) => exact(&self.project),
            Pat::Tok(t) if t.is_fixed_width() => match self.fixed(*t, p) {
                Some(_) => p + t.max_len()..p + t.max_len() + 1,
                None => p..p,
            },
            Pat::Tok(t) => {
                let ok = |c: &char| match t {
                    Token::SubType => c.is_ascii_digit(),
                    Token::Rev => c.is_ascii_uppercase(),
                    _ => !(is_separator(*c) || matches!(*c, '{' | '}')),
                };
                let mut run = text.iter().take_while(|&c| ok(c)).count();
                if *t == Token::Rev {
                    run = run.min(MAX_REV_LEN);
                }
                p + 1..p + run + 1
            }
        }
    }

    fn compute_reach(&mut self) {
        let (n, len) = (self.pats.len(), self.text.len());
        self.reach = vec![vec![false; len + 1]; n + 1];
        self.reach[n][len] = true;
        for i in (0..n).rev() {
            for p in 0..=len {
                self.reach[i][p] = self.ends(i, p).any(|e| self.reach[i + 1][e]);
            }
        }
    }

    fn same(&self, a: Val, b: Val) -> bool {
        match (a, b) {
            (Val::Span(a0, a1), Val::Span(b0, b1)) => self.text[a0..a1] == self.text[b0..b1],
            (Val::Num(x), Val::Num(y)) => x == y,
            _ => false,
        }
    }

    fn search(&mut self, i: usize, p: usize, slots: &mut Slots) {
        if self.found.len() > 1 || self.budget == 0 || !self.reach[i][p] {
            return;
        }
        self.budget -= 1;
        if i == self.pats.len() {
            let r = self.to_parsed(slots);
            if !self.found.contains(&r) {
                self.found.push(r);
            }
            return;
        }
        let (k, fixed) = match &self.pats[i] {
            Pat::Tok(t) => (slot(*t), t.is_fixed_width().then(|| self.fixed(*t, p)).flatten()),
            Pat::Lit(_) => (None, None),
        };
        for e in self.ends(i, p) {
            let Some(k) = k else {
                self.search(i + 1, e, slots);
                continue;
            };
            let v = fixed.map_or(Val::Span(p, e), Val::Num);
            match slots[k] {
                // a repeated token must read the same as its first occurrence
                Some(bound) if !self.same(bound, v) => {}
                Some(_) => self.search(i + 1, e, slots),
                None => {
                    slots[k] = Some(v);
                    self.search(i + 1, e, slots);
                    slots[k] = None;
                }
            }
        }
    }

    fn to_parsed(&self, s: &Slots) -> ParsedNumber {
        let text = |k: usize| match s[k] {
            Some(Val::Span(a, b)) => Some(self.text[a..b].iter().collect()),
            _ => None,
        };
        let num = |k: usize| match s[k] {
            Some(Val::Num(n)) => Some(n),
            _ => None,
        };
        ParsedNumber {
            originator: text(0),
            recipient: text(1),
            correspondence_type: text(2),
            sub_type: text(3),
            rfa_type: text(4),
            discipline: text(5),
            rev: text(6),
            seq: num(7).unwrap_or(0) as u64,
            year: num(8).map(|y| y as i32),
            month: num(9).map(|m| m as u32),
            fiscal_year: num(10).map(|y| y as i32),
            contract: text(11),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{rev_label, system_default, validate_code, CodeKind, Period, SYSTEM_DEFAULT_TEMPLATE};
    use super::*;

    #[test]
    fn a_template_keeps_its_counters_only_with_the_same_key_parts_and_reset_scope() {
        let letter = Template::parse("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}").unwrap();
        let reworded = Template::parse("{ORIGINATOR}/{RECIPIENT}/{SEQ:5}/{YEAR:CE}").unwrap();
        let no_recipient = Template::parse("{ORIGINATOR}-{SEQ:4}-{YEAR:B.E.}").unwrap();
        assert!(letter.keeps_counters_of(ResetScope::Yearly, &reworded, ResetScope::Yearly));
        assert!(!letter.keeps_counters_of(ResetScope::Yearly, &reworded, ResetScope::Monthly));
        assert!(!letter.keeps_counters_of(ResetScope::Yearly, &no_recipient, ResetScope::Yearly));
    }
    use proptest::prelude::*;

    fn letter() -> RenderValues<'static> {
        RenderValues { originator: "คคง.", recipient: "สคฉ.3", seq: 1, year: 2025, month: 1, ..Default::default() }
    }

    fn validated(src: &str, ty: &str, scope: ResetScope) -> Template {
        Template::validate(src, ty, scope).unwrap_or_else(|e| panic!("{src}: {e:?}"))
    }

    fn errors(src: &str, ty: &str, scope: ResetScope) -> Vec<TemplateError> {
        Template::validate(src, ty, scope).expect_err(src)
    }

    #[test]
    fn seeds_examples_render_exactly() {
        let t = validated(SYSTEM_DEFAULT_TEMPLATE, "LETTER", ResetScope::Yearly);
        assert_eq!(t.render(&letter()), "คคง.-สคฉ.3-0001-2568");

        let (src, scope) = system_default("TRANSMITTAL");
        let t = validated(src, "TRANSMITTAL", scope);
        assert_eq!(t.render(&RenderValues { sub_type: "21", ..letter() }), "คคง.-สคฉ.3-21-0001-2568");
        assert_eq!(t.render(&RenderValues { sub_type: "21", seq: 117, ..letter() }), "คคง.-สคฉ.3-21-0117-2568");

        let (src, scope) = system_default("RFA");
        let t = validated(src, "RFA", scope);
        let v = RenderValues {
            project: "LCBP3-C2",
            correspondence_type: "RFA",
            discipline: "TER",
            rfa_type: "RPT",
            rev: "A",
            seq: 1,
            ..Default::default()
        };
        assert_eq!(t.render(&v), "LCBP3-C2-RFA-TER-RPT-0001-A");
    }

    #[test]
    fn renders_other_tokens() {
        let t = Template::parse("{YEAR:A.D.}/{MONTH}/{SEQ:1}/{YEAR:CE}{YEAR:BE}").unwrap();
        assert_eq!(t.render(&RenderValues { seq: 7, year: 2026, month: 3, ..Default::default() }), "2026/03/7/20262569");
        let t = Template::parse("{SEQ:10}").unwrap();
        assert_eq!(t.render(&RenderValues { seq: 9_999_999_999, ..Default::default() }), "9999999999");
        assert_eq!((t.seq_width(), t.max_seq()), (10, 9_999_999_999));
        assert_eq!(Template::parse(SYSTEM_DEFAULT_TEMPLATE).unwrap().max_seq(), 9999);
    }

    #[test]
    fn year_of_the_bangkok_new_year() {
        use chrono::TimeZone;
        let p = Period::at(ResetScope::Yearly, chrono::Utc.with_ymd_and_hms(2025, 12, 31, 17, 30, 0).unwrap());
        assert_eq!(p.key(), "YEAR_2026");
        let t = Template::parse(SYSTEM_DEFAULT_TEMPLATE).unwrap();
        assert_eq!(t.render(&RenderValues { year: p.year, month: p.month, ..letter() }), "คคง.-สคฉ.3-0001-2569");
    }

    #[test]
    fn fiscal_year_tokens_render_and_read_back() {
        // all four spellings; FY 2570 = A.D. 2027, issued in November 2026
        let t = validated("{ORIGINATOR}-{SEQ:4}-{FY:BE}/{FY:B.E.}/{FY:CE}/{FY:A.D.}", "LETTER", ResetScope::FiscalYear);
        let p = Period::of(ResetScope::FiscalYear, 2026, 11, 10);
        let v = RenderValues { year: p.year, month: p.month, fiscal_year: p.fiscal_year, ..letter() };
        let text = t.render(&v);
        assert_eq!(text, "คคง.-0001-2570/2570/2027/2027");
        let read = t.parse_number(&text, "P").unwrap();
        assert_eq!((read.fiscal_year, read.year, read.seq), (Some(2027), None, 1));
        // the B.E. and A.D. spellings must agree
        assert_eq!(t.parse_number("คคง.-0001-2570/2570/2026/2027", "P"), None);
        assert_eq!(Token::FyBe.name(), "{FY:BE}");
        assert_eq!(Token::FyAd.name(), "{FY:CE}");
        // a fiscal-year reset needs a fiscal-year token: a calendar year repeats across two fiscal years
        use TemplateError::*;
        assert_eq!(
            errors("{ORIGINATOR}-{SEQ:4}-{YEAR:B.E.}", "LETTER", ResetScope::FiscalYear),
            vec![ResetNeedsYear { scope: ResetScope::FiscalYear }]
        );
        assert_eq!(errors("{ORIGINATOR}-{SEQ:4}-{FY:BE}", "LETTER", ResetScope::Yearly), vec![ResetNeedsYear { scope: ResetScope::Yearly }]);
        assert!(ResetNeedsYear { scope: ResetScope::FiscalYear }.message_th().contains("{FY:BE}"));
        assert_eq!(Template::parse("{SEQ:4}-{FY}").unwrap_err(), vec![UnknownYearFormat { name: "{FY}".into(), position: 8 }]);
        assert!(UnknownYearFormat { name: "{FY:X}".into(), position: 0 }.to_string().contains("{FY:CE}"));
        assert!(UnknownYearFormat { name: "{FY:X}".into(), position: 0 }.message_th().contains("{FY:BE}"));
        assert_eq!(case_hint("{fy:be}"), " (token names are upper case: {FY:BE})");
    }

    #[test]
    fn the_contract_token_renders_reads_back_and_is_required_by_a_contract_reset() {
        use TemplateError::*;
        let t = validated("{PROJECT}-{CONTRACT}-{CORR_TYPE}-{SEQ:4}", "LETTER", ResetScope::Contract);
        let v = RenderValues { project: "LCBP3", contract: "C2", correspondence_type: "LETTER", seq: 7, ..Default::default() };
        assert_eq!(t.render(&v), "LCBP3-C2-LETTER-0007");
        let read = t.parse_number("LCBP3-C2-LETTER-0007", "LCBP3").unwrap();
        assert_eq!((read.contract.as_deref(), read.seq), (Some("C2"), 7));
        assert!(t.shows_contract());
        assert!(!Template::parse(SYSTEM_DEFAULT_TEMPLATE).unwrap().shows_contract());
        assert_eq!(Token::Contract.name(), "{CONTRACT}");
        // a contract code is a code like any other: next to another variable token it needs a separator
        assert_eq!(
            errors("{CONTRACT}{ORIGINATOR}-{SEQ:4}", "LETTER", ResetScope::None),
            vec![AmbiguousAdjacentTokens { first: "{CONTRACT}".into(), second: "{ORIGINATOR}".into(), position: 10 }]
        );
        // a contract reset without the contract shown: two contracts' numbers would look alike
        assert_eq!(errors("{PROJECT}-{SEQ:4}", "LETTER", ResetScope::Contract), vec![ResetNeedsContract]);
        assert_eq!(errors("{CONTRACT}-{SEQ:4}", "LETTER", ResetScope::Yearly), vec![ResetNeedsYear { scope: ResetScope::Yearly }]);
        validated("{CONTRACT}-{SEQ:4}-{YEAR:B.E.}", "LETTER", ResetScope::Contract);
        validated("{CONTRACT}-{SEQ:4}", "LETTER", ResetScope::None);
        let e = ResetNeedsContract;
        for m in [e.to_string(), e.message_th()] {
            assert!(m.contains("{CONTRACT}") && m.contains("NONE"), "{m}");
        }
        assert!(e.to_string().contains("Add the missing token"));
        assert_eq!(e.position(), None);
        assert_eq!(Template::parse("{contract}-{SEQ:4}").unwrap_err(), vec![UnknownToken { name: "{contract}".into(), position: 0 }]);
        assert_eq!(case_hint("{contract}"), " (token names are upper case: {CONTRACT})");
        // the preview's sample code is a valid code
        assert!(validate_code(CodeKind::Party, SAMPLE_CONTRACT_CODE).is_ok());
    }

    #[test]
    fn key_parts_of_the_seed_defaults() {
        let parts = |ty| Template::parse(system_default(ty).0).unwrap().key_parts();
        let kp = |originator, recipient, sub_type, rfa_type, discipline| KeyParts { originator, recipient, sub_type, rfa_type, discipline };
        assert_eq!(parts("LETTER"), kp(true, true, false, false, false));
        assert_eq!(parts("MEMO"), kp(true, true, false, false, false));
        assert_eq!(parts("TRANSMITTAL"), kp(true, true, true, false, false));
        assert_eq!(parts("RFA"), kp(false, false, false, true, true));
    }

    #[test]
    fn token_names() {
        assert_eq!(Token::Seq(4).name(), "{SEQ:4}");
        assert_eq!(Token::YearBe.name(), "{YEAR:B.E.}");
        assert_eq!(Token::CorrType.name(), "{CORR_TYPE}");
        assert!(Token::Month.is_fixed_width() && !Token::Rev.is_fixed_width() && !Token::SubType.is_fixed_width());
        assert_eq!(Template::parse("{YEAR:BE}{YEAR:CE}").unwrap().segments(), &[Segment::Token(Token::YearBe), Segment::Token(Token::YearAd)]);
        let t = Template::parse("ก{SEQ:4}").unwrap();
        assert_eq!((t.source(), t.segments()), ("ก{SEQ:4}", &[Segment::Literal("ก".into()), Segment::Token(Token::Seq(4))][..]));
    }

    // "เลขที่" is 6 characters but 18 bytes: positions must count characters
    const TH: &str = "เลขที่";

    #[test]
    fn syntax_errors_carry_character_positions() {
        use TemplateError::*;
        let p = |s: &str| Template::parse(&format!("{TH}{s}")).unwrap_err();
        assert_eq!(p("{FOO}-{SEQ:4}"), vec![UnknownToken { name: "{FOO}".into(), position: 6 }]);
        assert_eq!(p("-{ORG}"), vec![DeprecatedToken { name: "{ORG}".into(), replacement: "{ORIGINATOR}".into(), position: 7 }]);
        assert_eq!(p("{TYPE}"), vec![DeprecatedToken { name: "{TYPE}".into(), replacement: "{CORR_TYPE}".into(), position: 6 }]);
        assert_eq!(p("{CATEGORY}"), vec![DeprecatedToken { name: "{CATEGORY}".into(), replacement: "{SUB_TYPE} or {RFA_TYPE}".into(), position: 6 }]);
        assert_eq!(p("{SEQ:4"), vec![UnbalancedBrace { position: 6 }]);
        assert_eq!(p("x}{SEQ:4}"), vec![UnbalancedBrace { position: 7 }]);
        assert_eq!(p("{ {SEQ:4}"), vec![UnbalancedBrace { position: 6 }]);
        assert_eq!(p("-{}"), vec![EmptyToken { position: 7 }]);
        assert_eq!(p("{SEQ}"), vec![SeqWithoutWidth { position: 6 }]);
        assert_eq!(p("{SEQ:0}"), vec![SeqWidthOutOfRange { width: "0".into(), position: 6 }]);
        assert_eq!(p("{SEQ:11}"), vec![SeqWidthOutOfRange { width: "11".into(), position: 6 }]);
        assert_eq!(p("{SEQ:+4}"), vec![SeqWidthOutOfRange { width: "+4".into(), position: 6 }]);
        assert_eq!(p("{YEAR}"), vec![UnknownYearFormat { name: "{YEAR}".into(), position: 6 }]);
        assert_eq!(p("{YEAR:BC}"), vec![UnknownYearFormat { name: "{YEAR:BC}".into(), position: 6 }]);
        assert_eq!(p("{seq:4}"), vec![UnknownToken { name: "{seq:4}".into(), position: 6 }]);
        // every error is collected
        assert_eq!(p("{A}{B}}").len(), 3);
        assert!(Template::parse(&format!("{TH}{{SEQ:4}}")).is_ok());
    }

    #[test]
    fn messages_explain() {
        use TemplateError::*;
        let e = UnknownToken { name: "{seq:4}".into(), position: 6 };
        assert_eq!(e.to_string(), "unknown token {seq:4} at character 7 (token names are upper case: {SEQ:4})");
        assert!(e.message_th().contains("อักขระที่ 7"));
        assert_eq!(e.position(), Some(6));
        let e = DeprecatedToken { name: "{CATEGORY}".into(), replacement: "{SUB_TYPE} or {RFA_TYPE}".into(), position: 0 };
        assert!(e.to_string().contains("use {SUB_TYPE} or {RFA_TYPE} instead"));
        assert!(e.message_th().contains("{SUB_TYPE} หรือ {RFA_TYPE}"));
        assert!(UnknownYearFormat { name: "{YEAR}".into(), position: 0 }.to_string().contains("{YEAR:B.E.}"));
        let y = ResetNeedsYear { scope: ResetScope::Yearly };
        for m in [y.to_string(), y.message_th()] {
            assert!(m.contains("{YEAR:B.E.}") && m.contains("NONE"), "{m}");
        }
        assert!(y.to_string().contains("repeat"));
        let m = ResetNeedsYear { scope: ResetScope::Monthly };
        assert!(m.to_string().contains("{MONTH}") && m.message_th().contains("{MONTH}"));
        assert_eq!(m.position(), None);
        assert!(MissingSeq.message_th().contains("{SEQ:n}"));
    }

    #[test]
    fn validator_rules() {
        use TemplateError::*;
        let y = ResetScope::Yearly;
        assert_eq!(errors(&format!("{TH}-{{ORIGINATOR}}"), "LETTER", ResetScope::None), vec![MissingSeq]);
        assert_eq!(errors("{SEQ:4}-{SEQ:2}", "LETTER", ResetScope::None), vec![MultipleSeq]);
        // {SEQ} is reported once, not also as missing
        assert_eq!(errors("{SEQ}", "LETTER", ResetScope::None), vec![SeqWithoutWidth { position: 0 }]);

        // adjacency: the position is the second token's, counted in characters
        assert_eq!(
            errors(&format!("{TH}{{ORIGINATOR}}.{{RECIPIENT}}-{{SEQ:4}}"), "LETTER", ResetScope::None),
            vec![AmbiguousAdjacentTokens { first: "{ORIGINATOR}".into(), second: "{RECIPIENT}".into(), position: 19 }]
        );
        // a fixed-width token between two variable ones does not separate them …
        assert_eq!(
            errors("{DISCIPLINE}{SEQ:4}{REV}", "LETTER", ResetScope::None),
            vec![AmbiguousAdjacentTokens { first: "{DISCIPLINE}".into(), second: "{REV}".into(), position: 19 }]
        );
        // … but a separator anywhere in the literal text between them does
        for ok in
            ["{DISCIPLINE}-{SEQ:4}{REV}", "{DISCIPLINE}{SEQ:4}/{REV}", "{DISCIPLINE} {REV}{SEQ:4}", "{SEQ:4}{ORIGINATOR}", "x.-.{PROJECT}.-.{SEQ:3}"]
        {
            validated(ok, "LETTER", ResetScope::None);
        }

        assert_eq!(
            errors("{PROJECT}-{SEQ:4}-{REV}", "RFA", ResetScope::None),
            vec![MissingRequiredToken { token: "{DISCIPLINE}".into(), correspondence_type: "RFA".into() }]
        );
        assert_eq!(
            errors("{SEQ:4}", "RFA", ResetScope::None),
            vec![
                MissingRequiredToken { token: "{PROJECT}".into(), correspondence_type: "RFA".into() },
                MissingRequiredToken { token: "{DISCIPLINE}".into(), correspondence_type: "RFA".into() }
            ]
        );
        assert_eq!(
            errors(SYSTEM_DEFAULT_TEMPLATE, "TRANSMITTAL", y),
            vec![MissingRequiredToken { token: "{SUB_TYPE}".into(), correspondence_type: "TRANSMITTAL".into() }]
        );

        // 101 characters of template text
        let long = format!("{}{{SEQ:4}}", "ก".repeat(94));
        assert_eq!(long.chars().count(), 101);
        // (it renders only 98: the text limit is separate from the rendering limit)
        assert_eq!(errors(&long, "LETTER", ResetScope::None), vec![TooLong { len: 101 }]);
        // short text, long rendering: 5 codes of 20 + separators > 100
        let wide = "{PROJECT}-{ORIGINATOR}-{RECIPIENT}-{CORR_TYPE}-{DISCIPLINE}-{SEQ:4}";
        assert_eq!(errors(wide, "LETTER", ResetScope::None), vec![RenderTooLong { max_len: 100 }]);
        // exactly 100 at most: 4 codes (80) + 3 dashes + "-" + SEQ:10 + "-" + 5-digit sub-type = 100
        validated("{PROJECT}-{ORIGINATOR}-{RECIPIENT}-{CORR_TYPE}-{SEQ:10}-{SUB_TYPE}", "LETTER", ResetScope::None);
        assert_eq!(
            errors("{PROJECT}-{ORIGINATOR}-{RECIPIENT}-{CORR_TYPE}-{SEQ:10}-{SUB_TYPE}x", "LETTER", ResetScope::None),
            vec![RenderTooLong { max_len: 100 }]
        );

        // resets must show their period
        let rfa = system_default("RFA").0;
        assert_eq!(errors(rfa, "RFA", y), vec![ResetNeedsYear { scope: y }]);
        validated(rfa, "RFA", ResetScope::None);
        validated(&format!("{rfa}-{{YEAR:A.D.}}"), "RFA", y);
        let monthly = ResetScope::Monthly;
        assert_eq!(errors(SYSTEM_DEFAULT_TEMPLATE, "LETTER", monthly), vec![ResetNeedsYear { scope: monthly }]);
        assert_eq!(errors("{MONTH}-{SEQ:4}", "LETTER", monthly), vec![ResetNeedsYear { scope: monthly }]);
        validated("{ORIGINATOR}-{SEQ:4}-{MONTH}{YEAR:B.E.}", "LETTER", monthly);
        validated("{ORIGINATOR}-{SEQ:4}", "LETTER", ResetScope::None);

        // several problems are all reported, syntax and rules together
        let all = errors(&format!("{TH}{{ORG}}{{RECIPIENT}}{{DISCIPLINE}}"), "RFA", y);
        assert_eq!(
            all,
            vec![
                DeprecatedToken { name: "{ORG}".into(), replacement: "{ORIGINATOR}".into(), position: 6 },
                MissingSeq,
                AmbiguousAdjacentTokens { first: "{RECIPIENT}".into(), second: "{DISCIPLINE}".into(), position: 22 },
                MissingRequiredToken { token: "{PROJECT}".into(), correspondence_type: "RFA".into() },
                ResetNeedsYear { scope: y },
            ]
        );
    }

    #[test]
    fn reads_the_seed_examples_back() {
        let t = Template::parse(system_default("RFA").0).unwrap();
        let got = t.parse_number("LCBP3-C2-RFA-TER-RPT-0001-A", "LCBP3-C2").unwrap();
        let want = ParsedNumber {
            correspondence_type: Some("RFA".into()),
            discipline: Some("TER".into()),
            rfa_type: Some("RPT".into()),
            seq: 1,
            rev: Some("A".into()),
            ..Default::default()
        };
        assert_eq!(got, want);
        assert_eq!(t.parse_number("LCBP3-C2-RFA-TER-RPT-0001-A", "LCBP3"), None, "wrong project");
        assert_eq!(t.parse_number("LCBP3-C2-RFA-TER-RPT-0001-a", "LCBP3-C2"), None, "bad rev");
        assert_eq!(t.parse_number("LCBP3-C2-RFA-TER-RPT-001-A", "LCBP3-C2"), None, "short seq");

        let t = Template::parse(system_default("TRANSMITTAL").0).unwrap();
        let got = t.parse_number("คคง.-สคฉ.3-21-0117-2568", "X").unwrap();
        assert_eq!(
            got,
            ParsedNumber {
                originator: Some("คคง.".into()),
                recipient: Some("สคฉ.3".into()),
                sub_type: Some("21".into()),
                seq: 117,
                year: Some(2025),
                ..Default::default()
            }
        );
        assert_eq!(t.parse_number("คคง.-สคฉ.3-2A-0117-2568", "X"), None, "sub-type digits");
        assert_eq!(t.parse_number("คคง.-สคฉ.3-21-0117-256", "X"), None, "year digits");
    }

    #[test]
    fn parse_number_edge_cases() {
        // repeated tokens must agree; B.E. and A.D. years too
        let t = Template::parse("{ORIGINATOR}-{SEQ:2}-{ORIGINATOR}/{YEAR:A.D.}/{YEAR:B.E.}").unwrap();
        assert_eq!(t.parse_number("AB-01-AB/2025/2568", "P").map(|p| (p.originator, p.year)), Some((Some("AB".into()), Some(2025))));
        assert_eq!(t.parse_number("AB-01-AC/2025/2568", "P"), None);
        assert_eq!(t.parse_number("AB-01-AB/2025/2569", "P"), None);
        // month range
        let t = Template::parse("{SEQ:2}-{MONTH}").unwrap();
        assert_eq!(t.parse_number("01-12", "P").and_then(|p| p.month), Some(12));
        assert_eq!(t.parse_number("01-13", "P"), None);
        assert_eq!(t.parse_number("01-00", "P"), None);
        // an ambiguous (unvalidated) template gives no answer rather than a guess
        let t = Template::parse("{ORIGINATOR}{RECIPIENT}-{SEQ:1}").unwrap();
        assert_eq!(t.parse_number("ABC-1", "P"), None);
        assert_eq!(t.parse_number("AB-1", "P").and_then(|p| p.recipient), Some("B".into()));
        // … and stays fast even when hostile: every split of the first half is a candidate
        // that the repeated second half then refutes, so only the step budget ends the search
        let half = "{ORIGINATOR}{RECIPIENT}{DISCIPLINE}{RFA_TYPE}{CORR_TYPE}";
        let t = Template::parse(&format!("{half}X{half}")).unwrap();
        assert_eq!(t.parse_number(&format!("{}X{}", "A".repeat(60), "B".repeat(60)), "P"), None);
        assert_eq!(t.parse_number(&"A".repeat(1000), "P"), None);
    }

    // ---------- property tests ----------

    const NON_SEQ: [Token; 14] = [
        Token::Project,
        Token::Originator,
        Token::Recipient,
        Token::CorrType,
        Token::SubType,
        Token::RfaType,
        Token::Discipline,
        Token::Contract,
        Token::YearBe,
        Token::YearAd,
        Token::FyBe,
        Token::FyAd,
        Token::Month,
        Token::Rev,
    ];

    fn literal() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => Just("-".to_string()),
            2 => Just("/".to_string()),
            1 => Just(" ".to_string()),
            2 => Just(String::new()),
            1 => Just(".".to_string()),
            1 => Just("ก-".to_string()),
            1 => Just("-ข.".to_string()),
            1 => Just(".-.".to_string()),
            2 => "[ก-ฮA-Z0-9. /-]{1,4}",
        ]
    }

    /// Template text: up to `max` random tokens plus one `{SEQ:n}`, with random literals around.
    fn template_src(max: usize) -> impl Strategy<Value = String> {
        (
            prop::collection::vec(prop::sample::select(&NON_SEQ[..]), 0..=max),
            1u8..=10,
            any::<prop::sample::Index>(),
            prop::collection::vec(literal(), max + 2),
        )
            .prop_map(|(mut toks, w, at, lits)| {
                toks.insert(at.index(toks.len() + 1), Token::Seq(w));
                let mut s = lits[0].clone();
                for (t, l) in toks.iter().zip(&lits[1..]) {
                    s += &t.name();
                    s += l;
                }
                s
            })
    }

    const CODE: &str = "[ก-ฮ.A-Z0-9]{1,20}";

    #[derive(Clone, Debug)]
    struct Owned {
        project: String,
        originator: String,
        recipient: String,
        correspondence_type: String,
        sub_type: String,
        rfa_type: String,
        discipline: String,
        contract: String,
        seq: u64,
        year: i32,
        month: u32,
        fiscal_year: i32,
        rev: String,
    }

    impl Owned {
        fn values(&self, max_seq: u64) -> RenderValues<'_> {
            RenderValues {
                project: &self.project,
                originator: &self.originator,
                recipient: &self.recipient,
                correspondence_type: &self.correspondence_type,
                sub_type: &self.sub_type,
                rfa_type: &self.rfa_type,
                discipline: &self.discipline,
                contract: &self.contract,
                seq: self.seq % (max_seq + 1),
                year: self.year,
                month: self.month,
                fiscal_year: self.fiscal_year,
                rev: &self.rev,
            }
        }
    }

    fn owned() -> impl Strategy<Value = Owned> {
        (
            ("[ก-ฮ.A-Z0-9][ก-ฮ.A-Z0-9-]{0,19}", CODE, CODE, CODE),
            (0u32..100_000, CODE, CODE, CODE),
            (any::<u64>(), 1957i32..=2500, 1u32..=12, 0u32..18_278, 1957i32..=2500),
        )
            .prop_map(
                |(
                    (project, originator, recipient, correspondence_type),
                    (sub, rfa_type, discipline, contract),
                    (seq, year, month, rev, fiscal_year),
                )| Owned {
                    project,
                    originator,
                    recipient,
                    correspondence_type,
                    sub_type: sub.to_string(),
                    rfa_type,
                    discipline,
                    contract,
                    seq,
                    year,
                    month,
                    fiscal_year,
                    rev: rev_label(rev),
                },
            )
    }

    /// What reading `v` back through `t` must give: the fields `t` shows, nothing else.
    fn expected(t: &Template, v: &RenderValues) -> ParsedNumber {
        let mut p = ParsedNumber { seq: v.seq, ..Default::default() };
        for tok in t.tokens() {
            match tok {
                Token::Originator => p.originator = Some(v.originator.into()),
                Token::Recipient => p.recipient = Some(v.recipient.into()),
                Token::CorrType => p.correspondence_type = Some(v.correspondence_type.into()),
                Token::SubType => p.sub_type = Some(v.sub_type.into()),
                Token::RfaType => p.rfa_type = Some(v.rfa_type.into()),
                Token::Discipline => p.discipline = Some(v.discipline.into()),
                Token::Contract => p.contract = Some(v.contract.into()),
                Token::YearBe | Token::YearAd => p.year = Some(v.year),
                Token::Month => p.month = Some(v.month),
                Token::FyBe | Token::FyAd => p.fiscal_year = Some(v.fiscal_year),
                Token::Rev => p.rev = Some(v.rev.into()),
                Token::Project | Token::Seq(_) => {}
            }
        }
        p
    }

    fn scope() -> impl Strategy<Value = ResetScope> {
        prop::sample::select(vec![ResetScope::Yearly, ResetScope::Monthly, ResetScope::None, ResetScope::FiscalYear, ResetScope::Contract])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, max_global_rejects: 50_000, ..ProptestConfig::default() })]

        #[test]
        fn prop_reads_back_what_it_renders(src in template_src(5), o in owned(), sc in scope()) {
            let Ok(t) = Template::validate(&src, "LETTER", sc) else { return Err(TestCaseError::reject("invalid")) };
            for code in [&o.originator, &o.recipient, &o.correspondence_type, &o.rfa_type, &o.discipline, &o.contract] {
                prop_assert!(validate_code(CodeKind::Party, code).is_ok());
            }
            prop_assert!(validate_code(CodeKind::Project, &o.project).is_ok());
            let v = o.values(t.max_seq());
            let text = t.render(&v);
            prop_assert_eq!(t.parse_number(&text, &o.project), Some(expected(&t, &v)), "{} -> {}", src, text);
        }

        #[test]
        fn prop_accepted_templates_render_within_the_limit(src in template_src(8)) {
            let longest = Template::parse(&src).unwrap().render(&RenderValues {
                project: &"ก".repeat(MAX_CODE_LEN),
                originator: &"ข".repeat(MAX_CODE_LEN),
                recipient: &"ค".repeat(MAX_CODE_LEN),
                correspondence_type: &"A".repeat(MAX_CODE_LEN),
                sub_type: "99999",
                rfa_type: &"ง".repeat(MAX_CODE_LEN),
                discipline: &".".repeat(MAX_CODE_LEN),
                contract: &"ฉ".repeat(MAX_CODE_LEN),
                seq: 0,
                year: 2025,
                month: 12,
                fiscal_year: 2026,
                rev: "ZZZ",
            }).chars().count();
            match Template::validate(&src, "", ResetScope::None) {
                Ok(_) => prop_assert!(longest <= MAX_NUMBER_LEN, "{} renders {} chars", src, longest),
                Err(e) => prop_assert_eq!(e.contains(&TemplateError::RenderTooLong { max_len: MAX_NUMBER_LEN }), longest > MAX_NUMBER_LEN),
            }
        }

        #[test]
        fn prop_different_counters_never_render_the_same_number(
            src in template_src(5), a in owned(), b in owned(), field in 0usize..11, sc in scope()
        ) {
            let Ok(t) = Template::validate(&src, "LETTER", sc) else { return Err(TestCaseError::reject("invalid")) };
            // b2 = a with one field taken from b (same project and type)
            let mut b2 = a.clone();
            let shown = |tok: Token| t.tokens().any(|x| x == tok);
            let must_differ = match field {
                0 => { b2.originator = b.originator; shown(Token::Originator) }
                1 => { b2.recipient = b.recipient; shown(Token::Recipient) }
                2 => { b2.sub_type = b.sub_type; shown(Token::SubType) }
                3 => { b2.rfa_type = b.rfa_type; shown(Token::RfaType) }
                4 => { b2.discipline = b.discipline; shown(Token::Discipline) }
                5 => { b2.rev = b.rev; shown(Token::Rev) }
                6 => { b2.seq = b.seq; true }
                // a yearly or monthly reset period is a different counter, shown or not
                7 => { b2.year = b.year; matches!(sc, ResetScope::Yearly | ResetScope::Monthly) || shown(Token::YearBe) || shown(Token::YearAd) }
                8 => { b2.fiscal_year = b.fiscal_year; sc == ResetScope::FiscalYear || shown(Token::FyBe) || shown(Token::FyAd) }
                // a contract counter always shows its contract (the validation requires it)
                9 => { b2.contract = b.contract; shown(Token::Contract) }
                _ => { b2.month = b.month; sc == ResetScope::Monthly || shown(Token::Month) }
            };
            let (va, vb) = (a.values(t.max_seq()), b2.values(t.max_seq()));
            prop_assume!(va != vb && must_differ);
            prop_assert_ne!(t.render(&va), t.render(&vb), "{}", src);
        }
    }
}
