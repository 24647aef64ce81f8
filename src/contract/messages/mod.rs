//! The catalogue of what the service says to people when it refuses or fails, in Thai and English
//! (docs/rules/api.md#errors): one [`Message`] per kind of answer, each tied to its [`ErrorCode`], with named
//! arguments (`{detail}`, `{seconds}`…) that both languages take. Thai is the default; the REST API answers in
//! English to a caller whose `Accept-Language` prefers it. Shared by the server and the browser bundle.

use serde::{Deserialize, Serialize};

use super::ErrorCode;

mod access;
mod admin;
mod details;
mod import;
mod log;
mod notifications;
mod numbering;
mod reference;
mod requests;
mod templates;
mod workflow;

pub use access::AccessDetail;
pub use admin::AdminDetail;
pub use details::{fill, placeholders, AllOf, Arg, Detail, Entry};
pub use import::ImportDetail;
pub use log::LogDetail;
pub use notifications::NotificationDetail;
pub use numbering::NumberingDetail;
pub use reference::ReferenceDetail;
pub use requests::RequestDetail;
pub use templates::TemplateDetail;
pub use workflow::WorkflowDetail;

/// Every catalogue of details, by name, for the catalogue's test.
pub fn detail_catalogues() -> Vec<(&'static str, &'static [Entry])> {
    vec![
        ("access", AccessDetail::ENTRIES),
        ("admin", AdminDetail::ENTRIES),
        ("import", ImportDetail::ENTRIES),
        ("log", LogDetail::ENTRIES),
        ("notifications", NotificationDetail::ENTRIES),
        ("numbering", NumberingDetail::ENTRIES),
        ("reference", ReferenceDetail::ENTRIES),
        ("requests", RequestDetail::ENTRIES),
        ("templates", TemplateDetail::ENTRIES),
        ("workflow", WorkflowDetail::ENTRIES),
    ]
}

/// The cookie that keeps a browser's choice of language (the pages are rendered in it).
pub const LANG_COOKIE: &str = "docnum_lang";

/// A language the service speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    #[default]
    Th,
    En,
}

impl Lang {
    /// The language tag (`Content-Language`, `<html lang>`, the cookie's value).
    pub fn code(self) -> &'static str {
        match self {
            Lang::Th => "th",
            Lang::En => "en",
        }
    }

    pub fn other(self) -> Lang {
        match self {
            Lang::Th => Lang::En,
            Lang::En => Lang::Th,
        }
    }

    /// The language a form field names (`th`, `en`).
    pub fn from_code(code: &str) -> Option<Lang> {
        match code.trim() {
            "th" => Some(Lang::Th),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The cookie that remembers this language for a year (`Set-Cookie`, `document.cookie`).
    pub fn cookie(self) -> String {
        format!("{LANG_COOKIE}={}; path=/; max-age=31536000; SameSite=Lax", self.code())
    }

    /// The language chosen in a `Cookie:` header / `document.cookie` string; Thai when absent.
    pub fn from_cookie_header(cookies: &str) -> Lang {
        cookies
            .split(';')
            .filter_map(|c| c.trim().split_once('='))
            .find(|(k, _)| *k == LANG_COOKIE)
            .map(|(_, v)| if v.trim() == "en" { Lang::En } else { Lang::Th })
            .unwrap_or_default()
    }

    /// The language a request's `Cookie:` headers choose (a page's language): English when one of them says so.
    pub fn from_cookie_headers<'a>(headers: impl IntoIterator<Item = &'a str>) -> Lang {
        headers.into_iter().map(Lang::from_cookie_header).find(|l| *l == Lang::En).unwrap_or_default()
    }

    /// The language an `Accept-Language` header prefers among Thai and English (by `q`, then by order): Thai when it
    /// names neither, or names them equally.
    pub fn negotiate(accept_language: &str) -> Lang {
        let mut best: Option<(Lang, f32)> = None;
        for item in accept_language.split(',') {
            let mut parts = item.split(';');
            let tag = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts.filter_map(|p| p.trim().strip_prefix("q=")).find_map(|q| q.trim().parse::<f32>().ok()).unwrap_or(1.0);
            let lang = match tag.split('-').next() {
                Some("th") => Lang::Th,
                Some("en") => Lang::En,
                _ => continue,
            };
            let better = match best {
                None => q > 0.0,
                Some((held, held_q)) => q > held_q || (q == held_q && lang == Lang::Th && held == Lang::En),
            };
            if better {
                best = Some((lang, q));
            }
        }
        best.map(|(lang, _)| lang).unwrap_or_default()
    }
}

/// One message of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// What a code says when nothing more is known (a page that has only the code, a conflict with no detail).
    Code(ErrorCode),
    /// `{detail}`: what is wrong with the format.
    InvalidFormat,
    /// `{detail}`: which field, and why.
    Validation,
    /// `{detail}`: what was not found.
    NotFound,
    /// `{detail}`: the conflict, said whole by the rule that found it.
    Conflict,
    WrongCurrentPassword,
    /// `{seconds}` to wait.
    LoginRateLimited,
    EventsRateLimited,
    CrossOrigin,
    /// `{counter}` held back; `{last}` number witnessed.
    BehindWitness,
    /// `{detail}`: arguments of a server function that did not decode.
    BadArguments,
    /// `{detail}`: the network's failure, as the browser saw it.
    Unreachable,
    /// `{detail}`: a failure of the framework.
    FrameworkFailure,
}

impl Message {
    /// Every message: each code's, then the others.
    pub fn all() -> Vec<Message> {
        let mut all: Vec<Message> = ErrorCode::ALL.iter().map(|c| Message::Code(*c)).collect();
        all.extend([
            Message::InvalidFormat,
            Message::Validation,
            Message::NotFound,
            Message::Conflict,
            Message::WrongCurrentPassword,
            Message::LoginRateLimited,
            Message::EventsRateLimited,
            Message::CrossOrigin,
            Message::BehindWitness,
            Message::BadArguments,
            Message::Unreachable,
            Message::FrameworkFailure,
        ]);
        all
    }

    /// The text with `{name}` where an argument goes.
    pub fn template(self, lang: Lang) -> &'static str {
        use ErrorCode as C;
        use Lang::{En, Th};
        match (self, lang) {
            (Message::Code(code), Th) => match code {
                C::ConfigNotFound => "ไม่พบการตั้งค่ารูปแบบเลขที่เอกสาร",
                C::SequenceExhausted => "เลขลำดับเต็มแล้ว กรุณาติดต่อผู้ดูแลระบบ",
                C::LockTimeout => "ระบบกำลังยุ่ง กรุณาลองใหม่ภายหลัง",
                C::ReservationExpired => "การจองเลขที่หมดอายุแล้ว กรุณาจองใหม่",
                C::DuplicateNumber => "เลขที่เอกสารนี้มีอยู่แล้ว",
                C::InvalidFormat => "รูปแบบเลขที่เอกสารไม่ถูกต้อง",
                C::ManualOverrideNotAllowed => "ไม่อนุญาตให้กำหนดเลขที่เอง",
                C::VersionConflict => "เลขที่เอกสารถูกเปลี่ยน กรุณาลองใหม่",
                C::ValidationError => "ข้อมูลไม่ถูกต้อง",
                C::NotFound => "ไม่พบข้อมูล",
                C::Unauthenticated => "กรุณาเข้าสู่ระบบก่อนใช้งาน",
                C::InvalidCredentials => "ชื่อผู้ใช้หรือรหัสผ่านไม่ถูกต้อง",
                C::Forbidden => "คุณไม่มีสิทธิ์ดำเนินการนี้",
                C::RateLimited => "มีการขอเลขที่บ่อยเกินไป กรุณารอสักครู่แล้วลองใหม่",
                C::PayloadTooLarge => "ข้อมูลที่ส่งมามีขนาดใหญ่เกินไป",
                C::UnsupportedMediaType => "ระบบรับเฉพาะข้อมูลแบบ JSON (Content-Type: application/json)",
                C::AlreadyExists => "มีข้อมูลนี้อยู่แล้ว",
                C::AlreadyConfirmed => "เลขที่นี้ได้รับการยืนยันแล้ว",
                C::ReservationCancelled => "การจองเลขที่นี้ถูกยกเลิกแล้ว",
                C::NotConfirmed => "เลขที่นี้ยังไม่ได้รับการยืนยัน",
                C::RevisionExhausted => "ใช้รหัสฉบับแก้ไขครบแล้ว",
                C::OverrideBelowIssued => "เลขที่กำหนดต่ำกว่าเลขที่ออกไปแล้ว",
                C::ResetAlreadyPending => "มีคำขอรีเซ็ตตัวนับนี้รออนุมัติอยู่แล้ว",
                C::ResetAboveLast => "ค่าที่รีเซ็ตต้องไม่มากกว่าเลขล่าสุดของตัวนับ",
                C::ResetBelowConfirmed => "ค่าที่รีเซ็ตต่ำกว่าเลขที่ยืนยันแล้ว",
                C::KeyChangeNotAcknowledged => "การแก้แม่แบบนี้เปลี่ยนตัวนับที่ใช้ กรุณายืนยันก่อนบันทึก",
                C::CodeImmutable => "รหัสนี้ใช้ออกเลขไปแล้ว จึงแก้ไขไม่ได้",
                C::WfInvalidTransition => "ขั้นตอนนี้ทำไม่ได้จากสถานะปัจจุบัน",
                C::WfVersionConflict => "ข้อมูลถูกเปลี่ยนโดยผู้อื่น กรุณาโหลดใหม่แล้วลองอีกครั้ง",
                C::IdempotencyKeyReused => "Idempotency-Key นี้ใช้กับคำขออื่นไปแล้ว",
                C::IdempotencyInProgress => "คำขอเดียวกันกำลังดำเนินการอยู่ กรุณารอสักครู่",
                C::CounterBehindWitness => "ระงับการออกเลขของตัวนับนี้: ฐานข้อมูลย้อนหลังกว่าบันทึกยืนยันภายนอก",
                C::DbError | C::InternalError => "เกิดข้อผิดพลาดในระบบ กรุณาติดต่อผู้ดูแลระบบ",
                C::NetworkError => "ติดต่อเซิร์ฟเวอร์ไม่ได้ กรุณาลองใหม่",
            },
            (Message::Code(code), En) => match code {
                C::ConfigNotFound => "No numbering format is set up for this",
                C::SequenceExhausted => "The running number is full; please contact the administrator",
                C::LockTimeout => "The service is busy; please try again later",
                C::ReservationExpired => "The reservation has expired; please reserve again",
                C::DuplicateNumber => "This document number exists already",
                C::InvalidFormat => "The document number's format is not valid",
                C::ManualOverrideNotAllowed => "Setting a number by hand is not allowed",
                C::VersionConflict => "The document number changed meanwhile; please try again",
                C::ValidationError => "The data is not valid",
                C::NotFound => "Not found",
                C::Unauthenticated => "Please log in first",
                C::InvalidCredentials => "The username or password is wrong",
                C::Forbidden => "You are not allowed to do this",
                C::RateLimited => "Too many number requests; please wait a moment and try again",
                C::PayloadTooLarge => "The data sent is too large",
                C::UnsupportedMediaType => "Only JSON is accepted (Content-Type: application/json)",
                C::AlreadyExists => "It exists already",
                C::AlreadyConfirmed => "This number is confirmed already",
                C::ReservationCancelled => "This reservation was cancelled",
                C::NotConfirmed => "This number is not confirmed yet",
                C::RevisionExhausted => "Every revision code has been used",
                C::OverrideBelowIssued => "The number given is below one issued already",
                C::ResetAlreadyPending => "A reset of this counter is already waiting for approval",
                C::ResetAboveLast => "A reset may not go above the counter's last number",
                C::ResetBelowConfirmed => "The reset value is below a confirmed number",
                C::KeyChangeNotAcknowledged => "This change moves the template to other counters; confirm it before saving",
                C::CodeImmutable => "This code has numbered documents and cannot change",
                C::WfInvalidTransition => "This step cannot be taken from the current state",
                C::WfVersionConflict => "Someone else changed it; please reload and try again",
                C::IdempotencyKeyReused => "This Idempotency-Key was used with another request",
                C::IdempotencyInProgress => "The same request is still being served; please wait a moment",
                C::CounterBehindWitness => "This counter issues nothing: the database is behind its outside witness",
                C::DbError | C::InternalError => "Something failed in the service; please contact the administrator",
                C::NetworkError => "The server cannot be reached; please try again",
            },
            (Message::InvalidFormat, Th) => "รูปแบบเลขที่เอกสารไม่ถูกต้อง: {detail}",
            (Message::InvalidFormat, En) => "The document number's format is not valid: {detail}",
            (Message::Validation, Th) => "ข้อมูลไม่ถูกต้อง: {detail}",
            (Message::Validation, En) => "The data is not valid: {detail}",
            (Message::NotFound, Th) => "ไม่พบข้อมูล: {detail}",
            (Message::NotFound, En) => "Not found: {detail}",
            (Message::Conflict, _) => "{detail}",
            (Message::WrongCurrentPassword, Th) => "รหัสผ่านปัจจุบันไม่ถูกต้อง",
            (Message::WrongCurrentPassword, En) => "The current password is wrong",
            (Message::LoginRateLimited, Th) => "เข้าสู่ระบบไม่สำเร็จหลายครั้งเกินไป กรุณารอ {seconds} วินาทีแล้วลองใหม่",
            (Message::LoginRateLimited, En) => "Too many failed logins; please wait {seconds} seconds and try again",
            (Message::EventsRateLimited, Th) => "เปิดหน้าจอที่ติดตามการเปลี่ยนแปลงพร้อมกันมากเกินไป กรุณาปิดแท็บที่ไม่ใช้แล้วลองใหม่",
            (Message::EventsRateLimited, En) => "Too many pages follow live changes at once; please close the tabs you do not use and try again",
            (Message::CrossOrigin, Th) => "คำขอนี้ไม่ได้มาจากหน้าเว็บของระบบ จึงถูกปฏิเสธ",
            (Message::CrossOrigin, En) => "This request did not come from the service's own pages, so it was refused",
            (Message::BehindWitness, Th) => "ระงับการออกเลขของตัวนับ {counter}: ฐานข้อมูลย้อนหลังกว่าบันทึกยืนยันภายนอก (เลขล่าสุดที่ออกไปแล้วคือ {last}) เช่น หลังกู้คืนข้อมูลสำรอง ผู้ดูแลระบบสูงสุดต้องอนุมัติให้ออกเลขต่อจากเลขนั้น",
            (Message::BehindWitness, En) => "Counter {counter} issues nothing: the database is behind its outside witness (the last number issued was {last}), as after restoring a backup; a super admin must approve issuing on from that number",
            (Message::BadArguments, Th) => "ข้อมูลไม่ถูกต้อง: {detail}",
            (Message::BadArguments, En) => "The data is not valid: {detail}",
            (Message::Unreachable, Th) => "ติดต่อเซิร์ฟเวอร์ไม่ได้ กรุณาลองใหม่ ({detail})",
            (Message::Unreachable, En) => "The server cannot be reached; please try again ({detail})",
            (Message::FrameworkFailure, Th) => "เกิดข้อผิดพลาดในระบบ กรุณาติดต่อผู้ดูแลระบบ ({detail})",
            (Message::FrameworkFailure, En) => "Something failed in the service; please contact the administrator ({detail})",
        }
    }

    /// The message in `lang`, its `{name}`s replaced by `args`' values.
    pub fn render(self, lang: Lang, args: &[(&str, &str)]) -> String {
        fill(self.template(lang), args)
    }

    /// The argument names of the message in `lang`, in order of first use.
    pub fn arguments(self, lang: Lang) -> Vec<&'static str> {
        placeholders(self.template(lang))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thai(s: &str) -> bool {
        s.chars().any(|c| ('\u{0E00}'..='\u{0E7F}').contains(&c))
    }

    #[test]
    fn every_code_and_message_speaks_both_languages_with_the_same_arguments() {
        let all = Message::all();
        for code in ErrorCode::ALL {
            assert!(all.contains(&Message::Code(*code)), "{code:?} has no message");
        }
        for m in all {
            let (th, en) = (m.template(Lang::Th), m.template(Lang::En));
            assert!(!th.trim().is_empty() && !en.trim().is_empty(), "{m:?}");
            let mut th_args = m.arguments(Lang::Th);
            let mut en_args = m.arguments(Lang::En);
            th_args.sort();
            en_args.sort();
            assert_eq!(th_args, en_args, "{m:?}: the languages take other arguments");
            if m != Message::Conflict {
                assert!(thai(th), "{m:?} in Thai: {th}");
                assert_ne!(th, en, "{m:?}");
            }
            assert!(!thai(en), "{m:?} in English holds Thai: {en}");
            let filled = m.render(Lang::En, &th_args.iter().map(|a| (*a, "x")).collect::<Vec<_>>());
            assert!(!filled.contains('{'), "{m:?}: {filled}");
        }
    }

    #[test]
    fn every_detail_speaks_both_languages_with_its_declared_arguments() {
        let mut names = std::collections::HashSet::new();
        for (catalogue, entries) in detail_catalogues() {
            assert!(!entries.is_empty(), "{catalogue} is empty");
            for e in entries {
                assert!(names.insert((catalogue, e.name)), "{catalogue}::{} twice", e.name);
                let mut declared = e.arguments.to_vec();
                declared.sort();
                for (lang, text) in [(Lang::Th, e.th), (Lang::En, e.en)] {
                    let mut used = placeholders(text);
                    used.sort();
                    assert_eq!(used, declared, "{catalogue}::{} in {lang:?} takes other arguments: {text}", e.name);
                }
                assert!(thai(e.th), "{catalogue}::{} in Thai: {}", e.name, e.th);
                assert!(!thai(e.en), "{catalogue}::{} in English holds Thai: {}", e.name, e.en);
                assert_ne!(e.th, e.en, "{catalogue}::{}", e.name);
            }
        }
    }

    #[test]
    fn accept_language_picks_thai_or_english_by_preference() {
        assert_eq!(Lang::negotiate("en"), Lang::En);
        assert_eq!(Lang::negotiate("en-US,en;q=0.9"), Lang::En);
        assert_eq!(Lang::negotiate("th-TH,th;q=0.9,en;q=0.8"), Lang::Th);
        assert_eq!(Lang::negotiate("fr, en;q=0.5, th;q=0.7"), Lang::Th);
        assert_eq!(Lang::negotiate("fr, th;q=0.5, EN;q=0.7"), Lang::En);
        assert_eq!(Lang::negotiate("en;q=0.8, th;q=0.8"), Lang::Th, "a tie goes to Thai");
        assert_eq!(Lang::negotiate("en;q=0"), Lang::Th, "q=0: not acceptable");
        assert_eq!(Lang::negotiate("*"), Lang::Th);
        assert_eq!(Lang::negotiate(""), Lang::Th);
        assert_eq!(Lang::negotiate("de-DE"), Lang::Th);
    }

    #[test]
    fn arguments_are_filled_in() {
        assert_eq!(Message::LoginRateLimited.render(Lang::En, &[("seconds", "30")]), "Too many failed logins; please wait 30 seconds and try again");
        assert_eq!(Message::BehindWitness.arguments(Lang::Th), vec!["counter", "last"]);
        assert_eq!(Message::Validation.render(Lang::Th, &[("detail", "x")]), "ข้อมูลไม่ถูกต้อง: x");
    }
}
