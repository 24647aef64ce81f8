//! The numbers' transparency log as anyone outside the service sees it: the canonical text of an entry, the
//! C2SP tlog-proof a receipt is, and its offline check against the log's verifier key. Pure, no I/O: the server,
//! `docnum verify` and the browser bundle share it.
//!
//! An entry is UTF-8, one `key value` a line, keys in a fixed order; a document is named only by the SHA-256 of
//! its id (the log is public).

pub mod cosignature;
pub mod link;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use signed_note::{Note, NoteError, StandardVerifier, VerifierList};
use tlog_tiles::{check_record, check_tree, record_hash, Checkpoint, Hash};

pub use tlog_tiles::Hash as TreeHash;

/// The events a number (or its counter) goes through, as the log names them.
pub const EVENTS: [&str; 10] =
    ["reserved", "confirmed", "cancelled", "expired", "voided", "replaced", "revised", "overridden", "imported", "counter-reset"];

/// The first line of a receipt.
pub const PROOF_HEADER: &str = "c2sp.org/tlog-proof@v1";

/// One log entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The number as issued; `-` for an event of the counter alone (an override that moves it, a reset).
    pub number: String,
    pub project: String,
    pub type_code: String,
    pub event: String,
    /// RFC 3339, UTC, milliseconds.
    pub at: String,
    /// The counter's sequence the event is about, where it has one.
    pub sequence: Option<i64>,
    /// Hex SHA-256 of the document id, where the number names a document.
    pub document_sha256: Option<String>,
}

impl Entry {
    /// The canonical text: what the leaf hashes.
    pub fn to_text(&self) -> String {
        let mut s = format!("number {}\nproject {}\ntype {}\nevent {}\nat {}\n", self.number, self.project, self.type_code, self.event, self.at);
        if let Some(q) = self.sequence {
            s.push_str(&format!("sequence {q}\n"));
        }
        if let Some(d) = &self.document_sha256 {
            s.push_str(&format!("document-sha256 {d}\n"));
        }
        s
    }

    /// Reads an entry back; only its canonical text is accepted (the text re-made from it must be the same bytes).
    pub fn parse(text: &str) -> Result<Entry, Refusal> {
        let mut fields = std::collections::BTreeMap::new();
        for line in text.strip_suffix('\n').ok_or(Refusal::Entry)?.split('\n') {
            let (k, v) = line.split_once(' ').ok_or(Refusal::Entry)?;
            if fields.insert(k, v).is_some() {
                return Err(Refusal::Entry);
            }
        }
        let take = |k: &str| fields.get(k).map(|v| v.to_string()).ok_or(Refusal::Entry);
        let entry = Entry {
            number: take("number")?,
            project: take("project")?,
            type_code: take("type")?,
            event: take("event")?,
            at: take("at")?,
            sequence: fields.get("sequence").map(|v| v.parse().map_err(|_| Refusal::Entry)).transpose()?,
            document_sha256: fields.get("document-sha256").map(|v| v.to_string()),
        };
        if entry.to_text() != text || !EVENTS.contains(&entry.event.as_str()) {
            return Err(Refusal::Entry);
        }
        Ok(entry)
    }
}

/// Values that are one line: a newline inside one would let an entry say two things.
pub fn one_line(value: &str) -> String {
    value.replace(['\n', '\r'], " ")
}

/// A receipt: the entry, where it is, the path to the root, and the signed checkpoint of that root.
#[derive(Clone, Debug, PartialEq)]
pub struct Receipt {
    pub entry: Vec<u8>,
    pub index: u64,
    pub proof: Vec<Hash>,
    /// The signed note, verbatim.
    pub checkpoint: String,
}

impl Receipt {
    pub fn to_text(&self) -> String {
        let mut s = format!("{PROOF_HEADER}\nextra {}\nindex {}\n", BASE64_STANDARD.encode(&self.entry), self.index);
        for h in &self.proof {
            s.push_str(&BASE64_STANDARD.encode(h.0));
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&self.checkpoint);
        s
    }

    pub fn parse(text: &str) -> Result<Receipt, Refusal> {
        let text = text.replace("\r\n", "\n");
        let (head, checkpoint) = text.split_once("\n\n").ok_or(Refusal::Format)?;
        let mut lines = head.split('\n');
        if lines.next() != Some(PROOF_HEADER) {
            return Err(Refusal::Format);
        }
        let extra = lines.next().and_then(|l| l.strip_prefix("extra ")).ok_or(Refusal::Format)?;
        let entry = BASE64_STANDARD.decode(extra).map_err(|_| Refusal::Format)?;
        let index = lines.next().and_then(|l| l.strip_prefix("index ")).ok_or(Refusal::Format)?;
        if index.len() > 1 && index.starts_with('0') {
            return Err(Refusal::Format);
        }
        let index = index.parse().map_err(|_| Refusal::Format)?;
        let proof = lines
            .map(|l| {
                let bytes = BASE64_STANDARD.decode(l).map_err(|_| Refusal::Format)?;
                Ok(Hash(bytes.try_into().map_err(|_| Refusal::Format)?))
            })
            .collect::<Result<Vec<_>, Refusal>>()?;
        Ok(Receipt { entry, index, proof, checkpoint: checkpoint.to_string() })
    }
}

/// Why a receipt (or a checkpoint) is not valid. Each says what a person can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a tlog-proof (header, `extra`, `index`, base64).
    Format,
    /// The entry is not canonical log text.
    Entry,
    /// The verifier key itself is malformed.
    Key,
    /// The checkpoint is not a signed note, or not a checkpoint.
    Checkpoint,
    /// No signature by the log's key, or one that does not verify.
    Signature,
    /// The checkpoint is of another log.
    Origin,
    /// The inclusion proof does not lead from the entry to the checkpoint's root.
    Proof,
    /// Two checkpoints of one log that no append-only log could have both signed.
    Inconsistent,
}

impl Refusal {
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Format => "not a c2sp.org/tlog-proof@v1 receipt",
            Refusal::Entry => "the entry is not a log entry in canonical form",
            Refusal::Key => "the verifier key is malformed",
            Refusal::Checkpoint => "the checkpoint is not a signed checkpoint",
            Refusal::Signature => "the checkpoint is not signed by the log's key",
            Refusal::Origin => "the checkpoint is of another log",
            Refusal::Proof => "the inclusion proof does not lead to the checkpoint's root: the entry or the proof was changed",
            Refusal::Inconsistent => "the checkpoints are not consistent: the log was rewritten",
        }
    }

    pub fn reason_th(&self) -> &'static str {
        match self {
            Refusal::Format => "ไม่ใช่ใบรับรองรูปแบบ c2sp.org/tlog-proof@v1",
            Refusal::Entry => "รายการในใบรับรองไม่อยู่ในรูปแบบมาตรฐานของบันทึก",
            Refusal::Key => "กุญแจตรวจสอบไม่ถูกรูปแบบ",
            Refusal::Checkpoint => "จุดตรวจ (checkpoint) ไม่ถูกรูปแบบ",
            Refusal::Signature => "จุดตรวจไม่ได้ลงนามด้วยกุญแจของบันทึก",
            Refusal::Origin => "จุดตรวจเป็นของบันทึกอื่น",
            Refusal::Proof => "หลักฐานการบรรจุไม่นำไปสู่รากของจุดตรวจ: รายการหรือหลักฐานถูกแก้ไข",
            Refusal::Inconsistent => "จุดตรวจทั้งสองไม่สอดคล้องกัน: บันทึกถูกเขียนใหม่",
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for Refusal {}

/// A checkpoint whose signature by the log's key verified.
#[derive(Clone, Debug, PartialEq)]
pub struct Verified {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
    /// Names of the other signers on the note that no witness key given names.
    pub other_signers: Vec<String>,
    /// One per witness key given, in their order: whether and when it cosigned.
    pub witnesses: Vec<Witnessed>,
}

/// What a checkpoint says of one witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witnessed {
    pub name: String,
    pub cosigned: Cosigned,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cosigned {
    /// Its cosignature verifies; the time it saw the checkpoint (Unix seconds).
    At(u64),
    /// A line of its key that does not verify: the checkpoint or the line was changed.
    Invalid,
    /// No cosignature of its key.
    Absent,
}

impl Witnessed {
    /// The cosignature's time as RFC 3339, when it verified.
    pub fn time_rfc3339(&self) -> Option<String> {
        match self.cosigned {
            Cosigned::At(t) => chrono::DateTime::<chrono::Utc>::from_timestamp(i64::try_from(t).ok()?, 0).map(|d| d.to_rfc3339()),
            _ => None,
        }
    }
}

/// Verifies a signed checkpoint against the log's verifier key (`<origin>+<hash>+<key>`).
pub fn verify_checkpoint(note: &str, log_vkey: &str) -> Result<Verified, Refusal> {
    verify_checkpoint_witnessed(note, log_vkey, &[])
}

/// As `verify_checkpoint`, and tells for each witness key (`<name>+<id>+<0x04 key>`) whether it cosigned.
pub fn verify_checkpoint_witnessed(note: &str, log_vkey: &str, witness_vkeys: &[&str]) -> Result<Verified, Refusal> {
    let witnesses = witness_vkeys.iter().map(|k| cosignature::CosignatureVerifier::new(k)).collect::<Result<Vec<_>, _>>()?;
    let verifier = StandardVerifier::new(log_vkey.trim()).map_err(|_| Refusal::Key)?;
    let origin = signed_note::Verifier::name(&verifier).to_string();
    let note = Note::from_bytes(note.as_bytes()).map_err(|_| Refusal::Checkpoint)?;
    let (_, others) = note.verify(&VerifierList::new(vec![Box::new(verifier)])).map_err(|e| match e {
        NoteError::UnverifiedNote | NoteError::InvalidSignature { .. } | NoteError::MismatchedVerifier => Refusal::Signature,
        _ => Refusal::Checkpoint,
    })?;
    let cp = Checkpoint::from_bytes(note.text()).map_err(|_| Refusal::Checkpoint)?;
    if cp.origin() != origin {
        return Err(Refusal::Origin);
    }
    let mut report: Vec<Witnessed> = witnesses.iter().map(|w| Witnessed { name: w.name().to_string(), cosigned: Cosigned::Absent }).collect();
    let mut other_signers = Vec::new();
    for sig in &others {
        let line = String::from_utf8_lossy(&sig.to_bytes()).into_owned();
        let mut named = false;
        for (w, seen) in witnesses.iter().zip(report.iter_mut()) {
            match w.check_line(note.text(), &line) {
                None => continue,
                // a valid cosignature beside an invalid one of the same key still says the witness saw it
                Some(Some(t)) => seen.cosigned = Cosigned::At(t),
                Some(None) if seen.cosigned == Cosigned::Absent => seen.cosigned = Cosigned::Invalid,
                Some(None) => {}
            }
            named = true;
        }
        if !named {
            other_signers.push(sig.name().to_string());
        }
    }
    Ok(Verified { origin, size: cp.size(), root: *cp.hash(), other_signers, witnesses: report })
}

/// A receipt that verified: its entry and the checkpoint it is in.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub entry: Entry,
    pub index: u64,
    pub checkpoint: Verified,
}

/// Verifies a receipt with nothing but its text and the log's verifier key.
pub fn verify(receipt: &str, log_vkey: &str) -> Result<Checked, Refusal> {
    verify_witnessed(receipt, log_vkey, &[])
}

/// As `verify`, and tells for each witness key whether (and when) it cosigned the receipt's checkpoint.
pub fn verify_witnessed(receipt: &str, log_vkey: &str, witness_vkeys: &[&str]) -> Result<Checked, Refusal> {
    let r = Receipt::parse(receipt)?;
    let checkpoint = verify_checkpoint_witnessed(&r.checkpoint, log_vkey, witness_vkeys)?;
    if r.index >= checkpoint.size {
        return Err(Refusal::Proof);
    }
    check_record(&r.proof, checkpoint.size, checkpoint.root, r.index, record_hash(&r.entry)).map_err(|_| Refusal::Proof)?;
    let text = std::str::from_utf8(&r.entry).map_err(|_| Refusal::Entry)?;
    Ok(Checked { entry: Entry::parse(text)?, index: r.index, checkpoint })
}

/// Checks a consistency proof between two tree heads of one log.
#[allow(clippy::ptr_arg)] // tlog_tiles takes a Vec
pub fn check_consistency(proof: &Vec<Hash>, new_size: u64, new_root: Hash, old_size: u64, old_root: Hash) -> Result<(), Refusal> {
    check_tree(proof, new_size, new_root, old_size, old_root).map_err(|_| Refusal::Inconsistent)
}

/// A C2SP tlog-tiles path below `tile/` (tiles of height 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TilePath {
    /// `<L>/<N>[.p/<W>]`: hashes of level `8·L`.
    Hashes { level: u8, n: u64, width: u32 },
    /// `entries/<N>[.p/<W>]`: the entries themselves.
    Entries { n: u64, width: u32 },
}

/// Reads `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`; N in groups of three digits, each but the last `x`-prefixed.
/// Only the one spelling of each tile is accepted (a CDN caches by path).
pub fn parse_tile_path(path: &str) -> Option<TilePath> {
    let (kind, rest) = path.split_once('/')?;
    let (index, width) = match rest.split_once(".p/") {
        Some((i, w)) => {
            let w: u32 = w.parse().ok()?;
            if !(1..256).contains(&w) || w.to_string() != rest.split_once(".p/")?.1 {
                return None;
            }
            (i, w)
        }
        None => (rest, 256),
    };
    let groups: Vec<&str> = index.split('/').collect();
    let mut n: u64 = 0;
    for (i, g) in groups.iter().enumerate() {
        let last = i + 1 == groups.len();
        let digits = if last { *g } else { g.strip_prefix('x')? };
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        n = n.checked_mul(1000)?.checked_add(digits.parse::<u64>().ok()?)?;
    }
    if groups.len() > 1 && groups[0] == "x000" {
        return None;
    }
    match kind {
        "entries" => Some(TilePath::Entries { n, width }),
        l => {
            let level: u8 = l.parse().ok()?;
            (level.to_string() == l && level < 8).then_some(TilePath::Hashes { level, n, width })
        }
    }
}

/// The path of tile `n` (below `tile/<L>/` or `tile/entries/`), as `parse_tile_path` reads it.
pub fn tile_index_path(n: u64, width: u32) -> String {
    let mut s = format!("{:03}", n % 1000);
    let mut rest = n / 1000;
    while rest > 0 {
        s = format!("x{:03}/{s}", rest % 1000);
        rest /= 1000;
    }
    if width < 256 {
        s.push_str(&format!(".p/{width}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            number: "คคง.-สคฉ.3-0042-2569".into(),
            project: "LCBP3".into(),
            type_code: "RFA".into(),
            event: "confirmed".into(),
            at: "2026-11-28T13:45:01.123Z".into(),
            sequence: Some(42),
            document_sha256: Some("ab".repeat(32)),
        }
    }

    #[test]
    fn an_entry_reads_back_as_itself_and_nothing_else() {
        let e = entry();
        let text = e.to_text();
        assert_eq!(
            text,
            format!("number คคง.-สคฉ.3-0042-2569\nproject LCBP3\ntype RFA\nevent confirmed\nat 2026-11-28T13:45:01.123Z\nsequence 42\ndocument-sha256 {}\n", "ab".repeat(32))
        );
        assert_eq!(Entry::parse(&text), Ok(e));
        assert_eq!(Entry::parse(&text.replace("event confirmed\n", "event minted\n")), Err(Refusal::Entry));
        // another order of the same lines is not canonical
        assert_eq!(Entry::parse(&text.replace("project LCBP3\ntype RFA\n", "type RFA\nproject LCBP3\n")), Err(Refusal::Entry));
        assert_eq!(Entry::parse(text.trim_end()), Err(Refusal::Entry));
    }

    #[test]
    fn a_receipt_reads_back_as_itself() {
        let r =
            Receipt { entry: b"x\n".to_vec(), index: 7, proof: vec![Hash([1; 32]), Hash([2; 32])], checkpoint: "o\n1\nAA==\n\n— o abc\n".into() };
        assert_eq!(Receipt::parse(&r.to_text()), Ok(r.clone()));
        assert_eq!(Receipt::parse(&r.to_text().replace("index 7", "index 07")), Err(Refusal::Format));
        assert_eq!(Receipt::parse(&r.to_text().replace(PROOF_HEADER, "c2sp.org/tlog-proof@v2")), Err(Refusal::Format));
    }

    #[test]
    fn tile_paths_have_one_spelling() {
        assert_eq!(parse_tile_path("0/000"), Some(TilePath::Hashes { level: 0, n: 0, width: 256 }));
        assert_eq!(parse_tile_path("1/x001/234.p/5"), Some(TilePath::Hashes { level: 1, n: 1234, width: 5 }));
        assert_eq!(parse_tile_path("entries/x001/x234/067"), Some(TilePath::Entries { n: 1_234_067, width: 256 }));
        for bad in ["0/0", "0/x000/001", "0/001.p/256", "0/001.p/0", "0/001.p/05", "01/000", "9/000", "data/000", "0/x01/000", "0"] {
            assert_eq!(parse_tile_path(bad), None, "{bad}");
        }
        for (n, w) in [(0, 256), (999, 3), (1000, 256), (1_234_067, 17)] {
            assert_eq!(parse_tile_path(&format!("entries/{}", tile_index_path(n, w))), Some(TilePath::Entries { n, width: w }));
        }
    }
}
