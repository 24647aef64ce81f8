//! First-run data: the demo data set of docs/rules/numbering.md#reference-data-and-codes (switchable off) and the first super admin.

use crate::contract::Role;
use crate::numbering::system_default;
use crate::server::auth::{password, store as users, users as admin};
use crate::server::db::Db;
use crate::server::error::AppError;
use crate::server::reference::store as reference;
use crate::server::templates::store as templates;

pub(crate) const CORRESPONDENCE_TYPES: &[(&str, &str)] = &[
    ("LETTER", "หนังสือ"),
    ("RFI", "ขอข้อมูลเพิ่มเติม (RFI)"),
    ("MEMO", "บันทึกข้อความ"),
    ("EMAIL", "อีเมล"),
    ("MOM", "รายงานการประชุม"),
    ("INSTRUCTION", "หนังสือสั่งการ"),
    ("NOTICE", "หนังสือแจ้ง"),
    ("OTHER", "อื่น ๆ"),
    ("TRANSMITTAL", "ใบนำส่งเอกสาร"),
    ("RFA", "ขออนุมัติ (RFA)"),
    ("DRAWING", "แบบ"),
];

/// Loads the demo data set when the database has no project yet.
pub(crate) async fn seed_if_empty(db: &Db, now_ms: i64) -> Result<bool, AppError> {
    if !reference::is_empty(db).await? {
        return Ok(false);
    }
    let mut projects = vec![reference::create_project(db, "LCBP3", "โครงการท่าเรือแหลมฉบังระยะที่ 3", true).await?];
    for i in 1..=4 {
        projects.push(reference::create_project(db, &format!("LCBP3-C{i}"), &format!("LCBP3 สัญญาที่ {i}"), true).await?);
    }
    // the contracts of LCBP3, for `{CONTRACT}` and reset scope CONTRACT
    for (code, name) in
        [("C1", "งานถมทะเลและปรับปรุงคุณภาพดิน"), ("C2", "งานก่อสร้างท่าเทียบเรือ"), ("C3", "งานก่อสร้างอาคารและระบบสาธารณูปโภค"), ("C4", "งานติดตั้งระบบและอุปกรณ์")]
    {
        reference::create_contract(db, projects[0], code, name).await?;
    }
    let orgs = [
        ("กทท.", "การท่าเรือแห่งประเทศไทย", "OWNER"),
        ("สคฉ.3", "สำนักงานโครงการท่าเรือแหลมฉบัง ระยะที่ 3", "OWNER"),
        ("คคง.", "คณะที่ปรึกษาควบคุมงาน", "CONSULTANT"),
        ("ผรม.1", "ผู้รับจ้าง 1", "CONTRACTOR"),
        ("ผรม.2", "ผู้รับจ้าง 2", "CONTRACTOR"),
    ];
    for (code, name, role) in orgs {
        let org = reference::create_organization(db, code, name, role).await?;
        for p in &projects {
            reference::add_member(db, *p, org).await?;
        }
    }
    let mut types = Vec::new();
    for (code, name) in CORRESPONDENCE_TYPES {
        types.push((reference::create_correspondence_type(db, code, name).await?, *code));
    }
    let transmittal = types.iter().find(|(_, c)| *c == "TRANSMITTAL").map(|(id, _)| *id).unwrap_or_default();
    for (number, code, name) in
        [("11", "MAT", "วัสดุ"), ("12", "SHP", "Shop drawing"), ("13", "DWG", "แบบ"), ("14", "MET", "วิธีการทำงาน"), ("21", "GEN", "ทั่วไป")]
    {
        reference::create_sub_type(db, transmittal, number, code, name).await?;
    }
    for (code, name) in [("SDW", "Shop Drawing"), ("RPT", "Report"), ("MAT", "Material"), ("SHD", "Schedule")] {
        reference::create_rfa_type(db, code, name).await?;
    }
    for (code, name) in [("GEN", "ทั่วไป"), ("STR", "โครงสร้าง"), ("ARC", "สถาปัตยกรรม"), ("TER", "งานท่าเทียบเรือ"), ("GEO", "ธรณีเทคนิค"), ("ROW", "เขตทาง")]
    {
        reference::create_discipline(db, code, name).await?;
    }
    for p in &projects {
        for (type_id, code) in &types {
            let (template, scope) = system_default(code);
            templates::save_version(db, *p, Some(*type_id), template, scope, "ค่าเริ่มต้นตามเอกสารข้อกำหนด (demo data)", None, now_ms, None).await?;
        }
    }
    tracing::info!("demo data loaded");
    Ok(true)
}

/// The password the README's run command gives the first super admin (`scripts/run.sh`): published, so a
/// server listening beyond loopback refuses to start while `admin` still has it ([`refuse_published_password`]).
pub const PUBLISHED_DEMO_PASSWORD: &str = "admin-demo-2568";

/// Creates the first super admin `admin` when there is none (audited as `system`); prints a generated password once.
pub(crate) async fn ensure_admin(db: &Db, configured_password: Option<&str>, now_ms: i64) -> Result<(), AppError> {
    if users::user_exists(db, "admin").await? {
        return Ok(());
    }
    let (pw, generated) = match configured_password.filter(|p| !p.is_empty()) {
        Some(p) => (p.to_string(), false),
        None => (password::generate(), true),
    };
    let first = admin::Validated::new("admin", Some("ผู้ดูแลระบบ"), &pw, Role::SuperAdmin.as_str())?;
    admin::create_user_as(db, &admin::system_actor("system", now_ms), &first, &[]).await?;
    if generated {
        println!("First super admin created. Log in as: admin / {pw}   (this password is printed only once)");
    }
    Ok(())
}

/// Whether the user `admin` still has the published demo password (its stored hash verifies against it).
pub(crate) async fn admin_has_published_password(db: &Db) -> Result<bool, AppError> {
    Ok(match users::password_hash_of(db, "admin").await? {
        Some(hash) => password::verify(PUBLISHED_DEMO_PASSWORD.to_string(), hash).await,
        None => false,
    })
}

/// A server about to listen on `addr` beyond loopback (`0.0.0.0`, a LAN address) while `admin` still has the
/// published demo password: the refusal, saying how to set a password. Loopback is left alone (a demo on one's
/// own machine).
pub(crate) async fn refuse_published_password(db: &Db, addr: std::net::SocketAddr) -> Result<(), String> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    match admin_has_published_password(db).await {
        Ok(false) => Ok(()),
        Ok(true) => Err(format!(
            "refusing to listen on {addr}: the super admin `admin` still has the published demo password ({PUBLISHED_DEMO_PASSWORD}).\n\
             Set a password of your own first:\n\
             \x20   docnum set-password --username admin          (password from --password or NEW_USER_PASSWORD)\n\
             or, on a fresh database, start with BOOTSTRAP_ADMIN_PASSWORD set to a password of your own.\n\
             Listening on 127.0.0.1 (loopback) keeps working with the demo password."
        )),
        Err(e) => Err(format!("refusing to listen on {addr}: could not check the admin password: {}", e.report())),
    }
}
