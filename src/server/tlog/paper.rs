//! Receipts on paper: the verify link of a number as a QR code, and a stamp to print on the document (number,
//! project, type, date, the QR, the log's origin, where to verify). SVG, drawn here: the browser only shows it.

use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};

use crate::receipt::Entry;
use crate::server::error::AppError;

/// The QR code of `link`, black on white, with its quiet zone; one unit a module (the viewBox scales it).
pub fn qr_svg(link: &str) -> Result<String, AppError> {
    let code = QrCode::with_error_correction_level(link.as_bytes(), EcLevel::M)
        .map_err(|e| AppError::internal(format!("QR code of the verify link: {e}")))?;
    Ok(code.render::<svg::Color>().module_dimensions(1, 1).dark_color(svg::Color("#000")).light_color(svg::Color("#fff")).build())
}

/// The QR's drawing without its XML prologue and outer `<svg>`, and its size in modules: to nest in the stamp.
fn qr_body(qr: &str) -> Option<(&str, u32)> {
    let open = qr.find("<svg")?;
    let head_end = open + qr[open..].find('>')? + 1;
    let width = qr[open..head_end].split("width=\"").nth(1)?.split('"').next()?.parse().ok()?;
    Some((qr[head_end..].strip_suffix("</svg>")?, width))
}

/// Text for an SVG text node or attribute.
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// What a stamp says.
pub struct Stamp<'a> {
    pub entry: &'a Entry,
    /// `https://host`: where the verify page is.
    pub site: &'a str,
    pub log_origin: &'a str,
    pub link: &'a str,
}

/// The stamp: a bordered box, the QR on the left, the number and its facts on the right (Bangkok date).
pub fn stamp_svg(stamp: &Stamp) -> Result<String, AppError> {
    let qr = qr_svg(stamp.link)?;
    let (body, modules) = qr_body(&qr).ok_or_else(|| AppError::internal("QR code: unexpected SVG"))?;
    let date = chrono::DateTime::parse_from_rfc3339(&stamp.entry.at)
        .map(|d| d.with_timezone(&chrono_tz::Asia::Bangkok).format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|_| stamp.entry.at.clone());
    let e = |s: &str| xml_escape(s);
    let lines = [
        (20, "bold", e(&stamp.entry.number)),
        (13, "normal", format!("โครงการ {} · ประเภท {}", e(&stamp.entry.project), e(&stamp.entry.type_code))),
        (13, "normal", format!("{} · {} (เวลาไทย)", e(&stamp.entry.event), e(&date))),
        (11, "normal", format!("บันทึกความโปร่งใส {}", e(stamp.log_origin))),
        (11, "normal", format!("ตรวจสอบได้ที่ {}{}", e(stamp.site), crate::receipt::link::VERIFY_PATH)),
    ];
    let mut text = String::new();
    let mut y = 34;
    for (size, weight, line) in lines {
        text.push_str(&format!(r#"<text x="150" y="{y}" font-size="{size}" font-weight="{weight}">{line}</text>"#));
        y += size + 12;
    }
    Ok(format!(
        concat!(
            r##"<?xml version="1.0" encoding="UTF-8"?>"##,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="560" height="150" viewBox="0 0 560 150" "##,
            r##"font-family="'TH Sarabun New', 'Sarabun', 'Loma', 'Garuda', sans-serif" fill="#000">"##,
            r##"<rect x="1" y="1" width="558" height="148" rx="6" fill="#fff" stroke="#000" stroke-width="2"/>"##,
            r##"<svg x="10" y="10" width="130" height="130" viewBox="0 0 {m} {m}" shape-rendering="crispEdges">{body}</svg>"##,
            "{text}</svg>"
        ),
        m = modules,
        body = body,
        text = text
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qr_is_an_svg_and_nests_in_the_stamp() {
        let qr = qr_svg("https://d.example/verify?projectCode=P").unwrap();
        assert!(qr.contains("<svg") && qr.ends_with("</svg>"), "{qr}");
        let (body, modules) = qr_body(&qr).unwrap();
        assert!(body.starts_with("<rect") && !body.contains("<svg"), "{body}");
        // version 3 (29 modules) and a quiet zone of 4 on each side
        assert_eq!(modules, 29 + 8);
        let entry = Entry {
            number: "คคง.-0042/2569 <A&B>".into(),
            project: "LCBP3".into(),
            type_code: "RFA".into(),
            event: "confirmed".into(),
            at: "2026-11-28T20:45:01.123Z".into(),
            sequence: Some(42),
            document_sha256: None,
        };
        let s = stamp_svg(&Stamp { entry: &entry, site: "https://d.example", log_origin: "d.example/log", link: "https://d.example/verify?r=x" })
            .unwrap();
        assert!(s.contains("คคง.-0042/2569 &lt;A&amp;B&gt;"), "{s}");
        assert!(s.contains("2026-11-29 03:45"), "Bangkok date: {s}");
        assert!(s.contains("ตรวจสอบได้ที่ https://d.example/verify"));
        assert!(s.contains("บันทึกความโปร่งใส d.example/log"));
        assert_eq!(s.matches("<svg").count(), 2);
    }

    #[test]
    fn the_longest_link_a_qr_carries_as_is_stays_printable() {
        let link = format!("https://d.example/verify?r={}", &"aZ_9".repeat(100)[..crate::receipt::link::QR_LINK_MAX - 27]);
        let code = QrCode::with_error_correction_level(link.as_bytes(), EcLevel::M).unwrap();
        assert_eq!(link.len(), crate::receipt::link::QR_LINK_MAX);
        // version 15 at level M, 77 modules a side: ~0.4 mm each on a 3 cm code
        assert_eq!((code.version(), code.width()), (qrcode::Version::Normal(15), 77));
    }
}
