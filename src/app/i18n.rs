//! The UI's words, Thai first, English second — the one dictionary of the web app.
//! The language is a context signal, remembered in the `docnum_lang` cookie so that the server
//! renders the page in the same language the browser hydrates it in.

use leptos::prelude::*;

// the language is the catalogue's (`contract::messages`): the pages and the API speak the same two
pub use crate::contract::messages::{Lang, LANG_COOKIE};

/// (key, Thai, English)
const WORDS: &[(&str, &str, &str)] = &[
    ("app.name", "ระบบออกเลขที่เอกสาร", "Document Numbering"),
    ("nav.menu", "เมนู", "Menu"),
    ("nav.more", "เพิ่มเติม", "More"),
    ("common.actions", "การทำงาน", "Actions"),
    ("common.table", "ตาราง (เลื่อนไปทางข้างได้)", "Table (scrolls sideways)"),
    ("nav.reserve", "ออกเลขที่", "Numbers"),
    ("nav.blocks", "เลขเป็นชุด", "Blocks"),
    ("nav.templates", "แม่แบบ", "Templates"),
    ("nav.tokens", "API tokens", "API tokens"),
    ("nav.audit", "บันทึกตรวจสอบ", "Audit log"),
    ("nav.errors", "ข้อผิดพลาด", "Error log"),
    ("nav.logout", "ออกจากระบบ", "Log out"),
    ("nav.switch", "EN", "ไทย"),
    ("nav.switch.title", "Switch to English", "เปลี่ยนเป็นภาษาไทย"),
    ("common.loading", "กำลังโหลด…", "Loading…"),
    ("common.choose", "— เลือก —", "— choose —"),
    ("common.copy", "คัดลอก", "Copy"),
    ("common.copied", "คัดลอกแล้ว", "Copied"),
    ("common.copy_failed", "คัดลอกไม่สำเร็จ — กรุณาคัดลอกเอง", "Could not copy — please copy it by hand"),
    ("common.no_access", "คุณไม่มีสิทธิ์ใช้หน้านี้", "You do not have access to this page"),
    ("common.redirecting", "กำลังไปหน้าเข้าสู่ระบบ…", "Going to the login page…"),
    ("common.not_found", "ไม่พบหน้าที่ต้องการ", "Page not found"),
    ("common.inactive", "(ปิดใช้งาน)", "(inactive)"),
    ("common.all", "— ทั้งหมด —", "— all —"),
    ("common.prev", "‹ ก่อนหน้า", "‹ Previous"),
    ("common.next", "ถัดไป ›", "Next ›"),
    ("common.page", "หน้า", "Page"),
    ("common.of", "จาก", "of"),
    ("common.found", "พบ", "Found"),
    ("common.items", "รายการ", "entries"),
    ("common.per_page", "รายการต่อหน้า", "Per page"),
    ("common.time_note", "เวลาประเทศไทย (UTC+7)", "Thailand time (UTC+7)"),
    ("common.nothing", "ไม่พบรายการ", "Nothing found"),
    ("common.cancel", "ยกเลิก", "Cancel"),
    ("login.title", "เข้าสู่ระบบ", "Log in"),
    ("login.username", "ชื่อผู้ใช้", "User name"),
    ("login.password", "รหัสผ่าน", "Password"),
    ("login.submit", "เข้าสู่ระบบ", "Log in"),
    ("reserve.title", "ขอเลขที่เอกสาร", "Reserve a document number"),
    ("reserve.project", "โครงการ", "Project"),
    ("reserve.type", "ประเภทเอกสาร", "Correspondence type"),
    ("reserve.originator", "ผู้ส่ง (ต้นเรื่อง)", "Originator"),
    ("reserve.recipient", "ผู้รับ", "Recipient"),
    ("reserve.subtype", "ประเภทย่อย", "Sub-type"),
    ("reserve.rfatype", "ประเภท RFA", "RFA type"),
    ("reserve.discipline", "สาขางาน", "Discipline"),
    ("reserve.contract", "สัญญา", "Contract"),
    ("reserve.revision", "ครั้งที่แก้ไข (Revision)", "Revision"),
    ("reserve.revision.hint", "เว้นว่าง = A", "empty = A"),
    ("reserve.template", "แม่แบบที่ใช้", "Template in use"),
    ("reserve.source.ProjectType", "แม่แบบของโครงการสำหรับประเภทนี้", "project template for this type"),
    ("reserve.source.ProjectDefault", "แม่แบบเริ่มต้นของโครงการ", "project default template"),
    ("reserve.source.SystemDefault", "แม่แบบเริ่มต้นของระบบสำหรับประเภทนี้", "system default template for this type"),
    (
        "tpl.projectDefaultSkipped",
        "แม่แบบเริ่มต้นของโครงการไม่ตรงตามกฎของประเภทนี้ จึงไม่ถูกใช้",
        "the project default template breaks this type's rules, so it is not used",
    ),
    ("reserve.incomplete", "เลือกข้อมูลให้ครบเพื่อดูเลขที่ถัดไป", "Complete the form to see the next number"),
    ("reserve.preview", "เลขที่ถัดไป", "Next number"),
    ("reserve.preview.note", "ตัวอย่างเท่านั้น — ยังไม่ได้จอง", "preview only — not reserved"),
    (
        "reserve.preview.stale",
        "เลขที่ถัดไปเปลี่ยนแล้ว: มีการออกเลขหรือแก้ไขแม่แบบจากที่อื่น จึงแสดงค่าล่าสุดให้",
        "The next number changed: a number was taken or the template edited elsewhere; showing the latest",
    ),
    ("reserve.button", "จองเลขที่", "Reserve number"),
    ("reserve.step", "แสดงช่องที่ต้องเลือกต่อ", "Show the parts to choose"),
    ("reserve.busy", "กำลังจอง…", "Reserving…"),
    ("reserve.retry", "ลองอีกครั้ง", "Try again"),
    ("reserve.unreachable", "ส่งข้อมูลไม่สำเร็จ กรุณาตรวจสอบสัญญาณแล้วลองอีกครั้ง", "It did not go through: check the signal and try again"),
    ("reserve.reserved", "เลขที่ที่จองไว้", "Reserved number"),
    ("reserve.expires_in", "หมดอายุใน", "Expires in"),
    ("reserve.expired", "การจองหมดอายุแล้ว", "The reservation has expired"),
    ("reserve.document_id", "รหัสเอกสาร (Document ID)", "Document ID"),
    ("reserve.confirm", "ยืนยันการใช้เลขที่", "Confirm"),
    ("reserve.cancel", "ยกเลิกการจอง", "Cancel reservation"),
    ("reserve.cancel_reason", "เหตุผลการยกเลิก (ไม่บังคับ)", "Reason for cancelling (optional)"),
    ("reserve.status", "สถานะ", "Status"),
    ("reserve.status.RESERVED", "จองแล้ว (รอยืนยัน)", "reserved (awaiting confirmation)"),
    ("reserve.status.CONFIRMED", "ยืนยันแล้ว", "confirmed"),
    ("reserve.status.CANCELLED", "ยกเลิกแล้ว", "cancelled"),
    ("reserve.new", "ขอเลขที่ใหม่", "Reserve another"),
    ("reserve.block", "ขอเลขเป็นชุดล่วงหน้า…", "Reserve a block in advance…"),
    ("blocks.title", "เลขเป็นชุด", "Blocks of numbers"),
    ("blocks.intro", "เลขที่ต่อเนื่องกันที่จองไว้ล่วงหน้าให้สำนักงานสนามหรือผู้รับเหมา แต่ละเลขยืนยันหรือยกเลิกได้ทีละเลข เลขที่ยังไม่ยืนยันเมื่อสิ้นสุดการจองจะหมดอายุ (block expired)", "Contiguous numbers taken in advance for a site office or a subcontractor; each is confirmed or cancelled on its own, and those not confirmed when the hold ends expire (block expired)."),
    ("blocks.how", "จะขอเลขเป็นชุด ให้เลือกโครงการ ประเภท และส่วนประกอบของเลขที่หน้า", "To reserve a block, choose the project, type and parts on the page"),
    ("blocks.new", "ขอเลขเป็นชุด", "A new block"),
    ("blocks.first", "เลขแรกของชุด (ตัวอย่าง)", "First number of the block (preview)"),
    ("blocks.count", "จำนวนเลข", "How many"),
    ("blocks.holder", "สำหรับ (ผู้ถือชุด)", "For (holder)"),
    ("blocks.hold_until", "จองไว้ถึง", "Held until"),
    ("blocks.limits", "ชุดละ 2–{max} เลข จองไว้ได้ไม่เกิน {days} วัน (ไม่ระบุวัน: ตามค่าเริ่มต้นของระบบ)", "2–{max} numbers a block, held at most {days} days (no date: the service's default)"),
    ("blocks.reserve", "จองเป็นชุด", "Reserve the block"),
    ("blocks.list", "ชุดเลขของท่าน", "Your blocks"),
    ("blocks.none", "ยังไม่มีชุดเลข", "No blocks yet"),
    ("blocks.one", "ชุดเลข", "Block"),
    ("blocks.col.range", "ช่วงเลข", "Range"),
    ("blocks.col.counter", "โครงการ · ประเภท", "Project · type"),
    ("blocks.col.use", "การใช้", "Use"),
    ("blocks.col.by", "จองโดย", "Reserved by"),
    ("blocks.held", "จองไว้", "held"),
    ("blocks.confirmed", "ยืนยัน", "confirmed"),
    ("blocks.cancelled", "ยกเลิก", "cancelled"),
    ("blocks.expired", "หมดอายุ", "expired"),
    ("reserve.no_template", "ไม่สามารถอ่านแม่แบบได้", "The template cannot be read"),
    ("tpl.title", "แม่แบบเลขที่เอกสาร", "Numbering templates"),
    ("tpl.project", "โครงการ", "Project"),
    ("tpl.type", "ประเภทเอกสาร", "Correspondence type"),
    ("tpl.project_default", "ค่าเริ่มต้นของโครงการ (ทุกประเภท)", "Project default (all types)"),
    ("tpl.current", "แม่แบบปัจจุบัน", "Current template"),
    ("tpl.current.none", "ยังไม่มีแม่แบบเฉพาะ — ใช้", "No own template yet — uses the"),
    ("tpl.version", "ฉบับที่", "version"),
    ("tpl.by", "โดย", "by"),
    ("tpl.template", "แม่แบบ", "Template"),
    ("tpl.reset", "การเริ่มนับใหม่", "Counter reset"),
    ("tpl.reset.YEARLY", "ทุกปี (YEARLY)", "every year (YEARLY)"),
    ("tpl.reset.MONTHLY", "ทุกเดือน (MONTHLY)", "every month (MONTHLY)"),
    ("tpl.reset.NONE", "ไม่เริ่มใหม่ (NONE)", "never (NONE)"),
    ("tpl.reset.FISCAL_YEAR", "ทุกปีงบประมาณ (FISCAL_YEAR)", "every fiscal year (FISCAL_YEAR)"),
    ("tpl.reset.CONTRACT", "แยกตามสัญญา (CONTRACT)", "per contract (CONTRACT)"),
    ("ctr.period.none", "ไม่เริ่มนับใหม่", "never starts again"),
    ("ctr.period.fy", "ปีงบประมาณ", "fiscal year"),
    ("ctr.period.contract", "ตามสัญญา ไม่เริ่มนับใหม่", "per contract, never starts again"),
    ("ctr.register", "ดาวน์โหลดทะเบียนเลขที่ (ทุกลำดับพร้อมเหตุผล)", "Download the register (every sequence with its reason)"),
    ("tpl.tokens_help", "โทเค็นที่ใช้ได้", "Tokens"),
    ("tpl.preview", "ตัวอย่างเลขที่", "Preview"),
    ("tpl.sample_year", "ปีตัวอย่าง (พ.ศ.)", "Sample year (A.D.)"),
    ("tpl.sample_month", "เดือน", "Month"),
    ("tpl.valid", "แม่แบบถูกต้อง", "The template is valid"),
    ("tpl.errors", "ข้อผิดพลาด", "Errors"),
    ("tpl.position", "ตำแหน่ง", "position"),
    ("tpl.keyparts", "ตัวนับแยกตาม", "Separate counters per"),
    ("tpl.kp.project", "โครงการ", "project"),
    ("tpl.kp.type", "ประเภทเอกสาร", "correspondence type"),
    ("tpl.kp.originator", "ผู้ส่ง", "originator"),
    ("tpl.kp.recipient", "ผู้รับ", "recipient"),
    ("tpl.kp.sub_type", "ประเภทย่อย", "sub-type"),
    ("tpl.kp.rfa_type", "ประเภท RFA", "RFA type"),
    ("tpl.kp.discipline", "สาขางาน", "discipline"),
    ("tpl.kp.YEARLY", "ปี (เริ่มนับใหม่ทุกปี)", "year (restarts every year)"),
    ("tpl.kp.MONTHLY", "เดือน (เริ่มนับใหม่ทุกเดือน)", "month (restarts every month)"),
    ("tpl.kp.FISCAL_YEAR", "ปีงบประมาณ (เริ่มนับใหม่ทุกปีงบประมาณ)", "fiscal year (restarts every fiscal year)"),
    ("tpl.kp.CONTRACT", "สัญญา (ลำดับของแต่ละสัญญา ไม่เริ่มนับใหม่)", "contract (one sequence per contract, never restarts)"),
    ("tpl.kp.NONE", "ไม่เริ่มนับใหม่ (ลำดับต่อเนื่องตลอดโครงการ)", "never restarts (one sequence for the project)"),
    ("tpl.reason", "เหตุผลการแก้ไข (บังคับ)", "Reason for the change (required)"),
    ("tpl.save", "บันทึกแม่แบบ", "Save template"),
    ("tpl.saving", "กำลังบันทึก…", "Saving…"),
    ("tpl.saved", "บันทึกแล้ว ฉบับที่", "Saved, version"),
    ("tpl.pick", "เลือกโครงการและประเภทเอกสาร", "Choose a project and a correspondence type"),
    ("tpl.key_change.title", "คำเตือน: การเปลี่ยนแปลงนี้เปลี่ยนตัวนับเลขที่", "Warning: this change moves numbering to another counter"),
    ("tpl.key_change.body", "เลขลำดับจะเริ่มใหม่สำหรับตัวนับใหม่ เลขที่ที่ออกไปแล้วจะไม่เปลี่ยนแปลง", "Numbering restarts for the new counter key; numbers already issued do not change"),
    ("tpl.key_change.before", "ตัวนับเดิมแยกตาม", "Current counter per"),
    ("tpl.key_change.after", "ตัวนับใหม่แยกตาม", "New counter per"),
    ("tpl.key_change.ack", "ฉันเข้าใจว่าตัวนับเลขที่จะเปลี่ยน และยืนยันการเปลี่ยนแปลงนี้", "I understand that numbering moves to another counter, and I confirm this change"),
    ("tpl.key_change.server", "เซิร์ฟเวอร์ต้องการให้ยืนยันการเปลี่ยนตัวนับ — อ่านข้อความด้านล่าง แล้วติ๊กยืนยัน", "The server asks you to acknowledge the counter change — read the message below, then tick the box"),
    ("tpl.history", "ประวัติการแก้ไข", "History"),
    ("tpl.history.empty", "ยังไม่มีประวัติ — ประเภทนี้ยังไม่มีแม่แบบของตนเอง", "No history yet — this type has no template of its own"),
    ("tpl.history.current", "ฉบับปัจจุบัน", "current"),
    ("tpl.history.reason", "เหตุผล", "Reason"),
    ("tpl.history.first", "ฉบับแรก", "first version"),
    ("tpl.history.removed", "ส่วนที่ลบ", "removed"),
    ("tpl.history.added", "ส่วนที่เพิ่ม", "added"),
    ("tpl.history.unchanged", "ข้อความแม่แบบไม่เปลี่ยน", "template text unchanged"),
    ("tpl.retire", "เลิกใช้แม่แบบนี้", "Retire this template"),
    ("tpl.retire.note", "ประวัติของแม่แบบยังเก็บไว้ เลขที่ที่ออกแล้วไม่เปลี่ยน คำขอใหม่จะใช้แม่แบบถัดไปตามลำดับ (แม่แบบตั้งต้นของโครงการ หรือของระบบ)", "Its history is kept and numbers already issued stay as they are; new requests use the next template in order (the project's default, or the system's)."),
    ("tpl.retire.reason", "เหตุผลของการเลิกใช้", "Reason for retiring"),
    ("tpl.retire.confirm", "ยืนยันการเลิกใช้", "Retire it"),
    ("tpl.retire.done", "เลิกใช้แล้ว คำขอใหม่ใช้แม่แบบ", "Retired. New requests use"),
    ("tpl.rollback", "ย้อนกลับไปใช้ฉบับนี้", "Roll back to this version"),
    ("tpl.rollback.title", "ย้อนกลับเป็นฉบับที่", "Roll back to version"),
    ("tpl.rollback.note", "การย้อนกลับจะบันทึกเป็นฉบับใหม่ เลขที่ที่ออกไปแล้วจะไม่เปลี่ยนแปลง", "A rollback is saved as a new version; numbers already issued do not change"),
    ("tpl.rollback.reason", "เหตุผลการย้อนกลับ (บังคับ)", "Reason for the rollback (required)"),
    ("tpl.rollback.confirm", "ยืนยันการย้อนกลับ", "Confirm rollback"),
    ("tpl.rollback.busy", "กำลังย้อนกลับ…", "Rolling back…"),
    ("audit.title", "ค้นหาบันทึกการตรวจสอบ", "Audit log search"),
    ("audit.from", "ตั้งแต่วันที่", "From date"),
    ("audit.to", "ถึงวันที่", "To date"),
    ("audit.user", "ผู้ใช้ (ชื่อผู้ใช้ หรือ token:<ชื่อ>)", "User (user name, or token:<name>)"),
    ("audit.operation", "การดำเนินการ", "Operation"),
    ("audit.number", "เลขที่เอกสาร (หรือส่วนต้น)", "Document number (or its beginning)"),
    ("audit.project", "โครงการ", "Project"),
    ("audit.search", "ค้นหา", "Search"),
    ("audit.clear", "ล้างตัวกรอง", "Clear filters"),
    ("audit.csv", "ดาวน์โหลด CSV", "Download CSV"),
    ("audit.col.time", "เวลา", "Time"),
    ("audit.col.operation", "การดำเนินการ", "Operation"),
    ("audit.col.status", "สถานะ", "Status"),
    ("audit.col.number", "เลขที่เอกสาร", "Document number"),
    ("audit.col.sequence", "ลำดับ", "Seq."),
    ("audit.col.user", "ผู้ใช้", "User"),
    ("audit.col.details", "รายละเอียด", "Details"),
    ("audit.document_id", "รหัสเอกสาร", "document"),
    ("audit.fallback", "ล็อกสำรอง", "fallback"),
    ("audit.old", "เดิม", "old"),
    ("audit.new", "ใหม่", "new"),
    ("audit.template", "แม่แบบ", "template"),
    ("audit.counter_key", "ตัวนับ", "counter"),
    ("audit.more", "รายละเอียดเพิ่มเติม", "more details"),
    ("audit.lock_wait", "รอล็อก", "lock wait"),
    ("audit.retries", "ลองซ้ำ", "retries"),
    ("audit.total", "รวม", "total"),
    ("audit.user_agent", "โปรแกรมที่ใช้", "user agent"),
    ("errors.title", "บันทึกข้อผิดพลาด", "Error log"),
    ("errors.type", "ประเภทข้อผิดพลาด", "Error type"),
    ("errors.unresolved", "เฉพาะที่ยังไม่แก้ไข", "Unresolved only"),
    ("errors.col.time", "เวลา", "Time"),
    ("errors.col.type", "ประเภท", "Type"),
    ("errors.col.message", "ข้อความ", "Message"),
    ("errors.col.ref", "อ้างอิง", "Reference"),
    ("errors.col.state", "สถานะ", "State"),
    ("errors.open", "ยังไม่แก้ไข", "open"),
    ("errors.resolved", "แก้ไขแล้ว", "resolved"),
    ("errors.resolve", "ทำเครื่องหมายว่าแก้ไขแล้ว", "Mark resolved"),
    ("errors.reload", "โหลดใหม่", "Reload"),
    ("tokens.title", "API tokens", "API tokens"),
    ("tokens.name", "ชื่อโทเค็น", "Token name"),
    ("tokens.projects", "โครงการที่ใช้ได้ (ไม่เลือก = ทุกโครงการ)", "Projects (none chosen = all projects)"),
    ("tokens.create", "สร้างโทเค็น", "Create token"),
    ("tokens.secret", "โทเค็นใหม่ — แสดงครั้งเดียวเท่านั้น คัดลอกเก็บไว้ตอนนี้", "New token — shown only once, copy it now"),
    ("tokens.list", "โทเค็นที่คุณดูแล", "Tokens you administer"),
    ("tokens.prefix", "ขึ้นต้นด้วย", "Prefix"),
    ("tokens.scope", "โครงการ", "Projects"),
    ("tokens.all_projects", "ทุกโครงการ", "all projects"),
    ("tokens.created", "สร้างเมื่อ", "Created"),
    ("tokens.state", "สถานะ", "State"),
    ("tokens.active", "ใช้งานได้", "active"),
    ("tokens.revoked", "ถูกเพิกถอน", "revoked"),
    ("tokens.revoke", "เพิกถอน", "Revoke"),
    ("tokens.empty", "ยังไม่มีโทเค็น", "No tokens yet"),
    ("tokens.unreadable", "ขอบเขตอ่านไม่ได้ — ใช้งานไม่ได้", "unreadable scope — grants nothing"),
    // users and one's own password
    ("nav.users", "ผู้ใช้", "Users"),
    ("nav.account.title", "บัญชีของฉัน: เปลี่ยนรหัสผ่าน", "My account: change password"),
    ("users.title", "ผู้ใช้", "Users"),
    ("users.new", "เพิ่มผู้ใช้", "New user"),
    ("users.list", "ผู้ใช้ทั้งหมด", "All users"),
    ("users.username", "ชื่อผู้ใช้", "Username"),
    ("users.display_name", "ชื่อที่แสดง", "Display name"),
    ("users.password", "รหัสผ่าน", "Password"),
    ("users.role", "บทบาท", "Role"),
    ("users.role_of", "บทบาทของ", "Role of"),
    ("users.new_password_of", "รหัสผ่านใหม่ของ", "New password of"),
    ("users.projects", "โครงการที่ดูแล", "Projects administered"),
    ("users.state", "สถานะ", "State"),
    ("users.create", "เพิ่มผู้ใช้", "Create user"),
    ("users.created", "เพิ่มผู้ใช้แล้ว", "User created"),
    ("users.save", "บันทึกบทบาท/โครงการ", "Save role and projects"),
    ("users.saved", "บันทึกแล้ว", "Saved"),
    ("users.active", "ใช้งานได้", "active"),
    ("users.inactive", "ปิดการใช้งาน", "deactivated"),
    ("users.deactivate", "ปิดการใช้งาน", "Deactivate"),
    ("users.reactivate", "เปิดใช้งานอีกครั้ง", "Reactivate"),
    ("users.deactivated", "ปิดการใช้งานแล้ว", "Deactivated"),
    ("users.reactivated", "เปิดใช้งานแล้ว", "Reactivated"),
    ("users.set_password", "ตั้งรหัสผ่าน", "Set password"),
    ("users.password_set", "ตั้งรหัสผ่านแล้ว", "Password set"),
    // login attempts (super admins)
    ("nav.logins", "การเข้าระบบ", "Logins"),
    ("logins.title", "ประวัติการเข้าสู่ระบบ", "Login attempts"),
    ("logins.username", "ชื่อผู้ใช้ที่พิมพ์", "Username typed"),
    ("logins.outcome", "ผล", "Outcome"),
    ("logins.search", "ค้นหา", "Search"),
    ("logins.col.time", "เวลา", "Time"),
    ("logins.col.address", "ที่อยู่ IP", "Client address"),
    ("logins.col.agent", "เบราว์เซอร์ (User-Agent)", "User agent"),
    ("logins.no_such_user", "ไม่มีผู้ใช้ชื่อนี้", "no such user"),
    ("logins.outcome.ok", "สำเร็จ", "success"),
    ("logins.outcome.wrong_password", "รหัสผ่านไม่ถูกต้อง", "wrong password"),
    ("logins.outcome.unknown_user", "ไม่พบชื่อผู้ใช้", "unknown user"),
    ("logins.outcome.throttled", "ถูกระงับชั่วคราว (ผิดหลายครั้ง)", "throttled (too many failures)"),
    ("logins.outcome.inactive", "ผู้ใช้ถูกปิดการใช้งาน", "user deactivated"),
    ("logins.outcome.other", "อื่น ๆ", "other"),
    ("reserve.qr", "QR code สำหรับตรวจสอบเลขที่นี้ที่หน้า /verify", "QR code to verify this number at /verify"),
    ("reserve.stamp", "ตราประทับสำหรับพิมพ์ลงเอกสาร (SVG)", "Printable stamp for the document (SVG)"),
    ("verify.title", "ตรวจสอบใบรับรองเลขที่เอกสาร", "Verify a number's receipt"),
    ("verify.intro", "วางใบรับรอง (c2sp.org/tlog-proof) หรือเลือกไฟล์: เบราว์เซอร์ตรวจสอบเองด้วยกุญแจของบันทึกความโปร่งใส ไม่ต้องเชื่อเซิร์ฟเวอร์", "Paste a receipt (c2sp.org/tlog-proof) or choose its file: your browser checks it itself against the transparency log's key, trusting no server"),
    ("verify.bad_link", "ลิงก์ตรวจสอบไม่ถูกต้อง (พารามิเตอร์ r ไม่ใช่ base64url)", "The verify link is broken (its r parameter is not base64url)"),
    ("verify.receipt", "ใบรับรอง", "Receipt"),
    ("verify.file", "หรือเลือกไฟล์ใบรับรอง", "Or choose a receipt file"),
    ("verify.key", "กุญแจของบันทึก (สำหรับผู้เชี่ยวชาญ)", "The log's key (for experts)"),
    ("verify.key.hint", "กุญแจที่ระบบตรึงไว้ใส่ไว้แล้ว จะวางกุญแจอื่นก็ได้", "The key the service pins is filled in; paste another if you like"),
    ("verify.submit", "ตรวจสอบ", "Verify"),
    ("verify.project", "โครงการ", "Project"),
    ("verify.type", "ประเภทเอกสาร", "Document type"),
    ("verify.event", "เหตุการณ์", "Event"),
    ("verify.at", "เวลา (UTC)", "Time (UTC)"),
    ("verify.log", "บันทึก · ลำดับ / ขนาด", "Log · index / size"),
    ("verify.witnesses", "ผู้รับรองร่วม (witness)", "Witnesses"),
    ("verify.witnesses.none", "ระบบนี้ไม่ได้ตั้งผู้รับรองร่วม", "This service has no witnesses configured"),
    ("verify.witness.at", "ลงนามร่วมเมื่อ", "cosigned at"),
    ("verify.witness.absent", "ไม่มีลายมือชื่อร่วม", "no cosignature"),
    ("verify.witness.invalid", "ลายมือชื่อร่วมไม่ถูกต้อง", "cosignature not valid"),
    ("account.title", "เปลี่ยนรหัสผ่าน", "Change password"),
    ("account.current", "รหัสผ่านปัจจุบัน", "Current password"),
    ("account.new", "รหัสผ่านใหม่ (อย่างน้อย 8 ตัวอักษร)", "New password (at least 8 characters)"),
    ("account.again", "ยืนยันรหัสผ่านใหม่", "New password again"),
    ("account.too_short", "รหัสผ่านใหม่สั้นกว่า 8 ตัวอักษร", "The new password is shorter than 8 characters"),
    ("account.mismatch", "รหัสผ่านใหม่ทั้งสองช่องไม่ตรงกัน", "The two new passwords differ"),
    ("account.submit", "เปลี่ยนรหัสผ่าน", "Change password"),
    ("account.saved", "เปลี่ยนรหัสผ่านแล้ว", "Password changed"),
    // ---- admin pages: counters, reset requests, super-admin operations ----
    ("common.needs_admin", "หน้านี้สำหรับผู้ดูแลโครงการ (PROJECT_ADMIN) และผู้ดูแลระบบสูงสุด (SUPER_ADMIN) เท่านั้น", "This page is for project admins (PROJECT_ADMIN) and super admins (SUPER_ADMIN) only"),
    ("common.needs_super_admin", "หน้านี้สำหรับผู้ดูแลระบบสูงสุด (SUPER_ADMIN) เท่านั้น", "This page is for super admins (SUPER_ADMIN) only"),
    ("nav.counters", "ตัวนับ", "Counters"),
    ("nav.resets", "คำขอรีเซ็ต", "Reset requests"),
    ("nav.charts", "สถิติ", "Statistics"),
    ("chart.title", "สถิติการออกเลขที่", "Numbering statistics"),
    ("chart.intro", "90 วันล่าสุดถึงวันนี้ ตามเวลากรุงเทพฯ", "The last 90 days up to today, Bangkok time"),
    ("chart.daily", "เลขที่ที่ออกต่อวัน แยกตามประเภทเอกสาร", "Numbers issued per day, by correspondence type"),
    ("chart.daily.desc", "กราฟแท่งซ้อนรายวัน รวมทั้งหมด", "Stacked bars per day, in all"),
    ("chart.daily.desc_unit", "เลขที่ — ค่าทั้งหมดอยู่ในตารางใต้กราฟ", "numbers — every value is in the table below the chart"),
    ("chart.usage", "การใช้ตัวนับเมื่อสิ้นแต่ละวัน (ตัวนับของรอบปัจจุบันที่ใช้ไปมากที่สุด)", "Counter utilization at the end of each day (the fullest counters of the current period)"),
    ("chart.usage.desc", "กราฟเส้น 0–100 % ของเลขลำดับสูงสุดที่ออกแล้วเทียบกับเลขสูงสุดของตัวนับ มีเส้นเตือนที่ 95 % — ค่าทั้งหมดอยู่ในตารางใต้กราฟ", "Lines from 0 to 100 %: the highest sequence issued against the counter's maximum, with a warning line at 95 % — every value is in the table below the chart"),
    ("chart.usage.warn", "เตือน", "warning"),
    ("chart.legend", "คำอธิบายสี", "Legend"),
    ("chart.table", "ตารางข้อมูลของกราฟ", "The chart's data as a table"),
    ("chart.none", "ไม่มีข้อมูลในช่วงนี้", "Nothing in this period"),
    ("chart.col.day", "วันที่", "Day"),
    ("chart.col.total", "รวม", "Total"),
    ("nav.notifications", "การแจ้งเตือน", "Notifications"),
    ("nav.waiting.title", "คำขอรีเซ็ตที่รอคุณอนุมัติ", "Reset requests waiting for your approval"),
    // notifications: webhooks and their deliveries (super admins)
    ("notify.title", "การแจ้งเตือนผ่านเว็บฮุก", "Webhook notifications"),
    ("notify.webhooks", "เว็บฮุก", "Webhooks"),
    ("notify.url", "URL ปลายทาง", "Receiver URL"),
    ("notify.kinds", "เหตุการณ์ที่ส่ง (ไม่เลือก = ทุกเหตุการณ์)", "Events sent (none chosen = every event)"),
    ("notify.all_kinds", "ทุกเหตุการณ์", "every event"),
    ("notify.create", "เพิ่มเว็บฮุก", "Add webhook"),
    ("notify.secret", "รหัสลับสำหรับตรวจลายเซ็น (แสดงครั้งเดียวเท่านั้น — คัดลอกเก็บไว้)", "Signing secret (shown only this once — copy it now)"),
    ("notify.empty", "ยังไม่มีเว็บฮุก", "No webhooks yet"),
    ("notify.state", "สถานะ", "State"),
    ("notify.active", "ใช้งาน", "active"),
    ("notify.disabled", "ปิดอยู่", "disabled"),
    ("notify.counts", "รอส่ง · ล้มเหลว", "Pending · failed"),
    ("notify.pending", "รอส่ง", "pending"),
    ("notify.failed", "ล้มเหลว", "failed"),
    ("notify.created", "สร้างเมื่อ · โดย", "Created · by"),
    ("notify.enable", "เปิดใช้งาน", "Enable"),
    ("notify.disable", "ปิดใช้งาน", "Disable"),
    ("notify.delete", "ลบ", "Delete"),
    ("notify.replay_all", "ส่งซ้ำทั้งหมดที่ล้มเหลว", "Replay all failed"),
    ("notify.failures", "การส่งที่ล้มเหลว", "Failed deliveries"),
    ("notify.no_failures", "ไม่มีการส่งที่ล้มเหลว", "No failed deliveries"),
    ("notify.event", "เหตุการณ์", "Event"),
    ("notify.attempts", "จำนวนครั้งที่ส่ง", "Attempts"),
    ("notify.last_error", "ข้อผิดพลาดล่าสุด", "Last error"),
    ("notify.occurred", "เกิดเมื่อ", "Occurred"),
    ("notify.replay", "ส่งซ้ำ", "Replay"),
    ("notify.kind.reset_requested", "ขอรีเซ็ตตัวนับ", "Reset requested"),
    ("notify.kind.reset_approved", "อนุมัติรีเซ็ต", "Reset approved"),
    ("notify.kind.reset_rejected", "ปฏิเสธรีเซ็ต", "Reset rejected"),
    ("notify.kind.reset_executed", "รีเซ็ตตัวนับแล้ว", "Reset executed"),
    ("notify.kind.number_confirmed", "ยืนยันเลขที่", "Number confirmed"),
    ("notify.kind.number_voided", "ยกเลิกเลขที่ (VOID)", "Number voided"),
    ("notify.kind.counter_90", "ตัวนับใช้เกิน 90 %", "Counter past 90 %"),
    ("notify.kind.counter_95", "ตัวนับใช้เกิน 95 %", "Counter past 95 %"),
    ("notify.kind.behind_witness", "ตัวนับย้อนหลังบันทึกยืนยัน", "Counter behind its witness"),
    ("notify.kind.block_reserved", "จองเลขที่เป็นชุด", "Block of numbers reserved"),
    ("ctr.title", "ตัวนับเลขที่", "Counters"),
    ("ctr.project", "โครงการ", "Project"),
    ("ctr.type", "ประเภทเอกสาร", "Correspondence type"),
    ("ctr.year", "ปี (พ.ศ. หรือ ค.ศ.)", "Year (B.E. or A.D.)"),
    ("ctr.col.id", "รหัส", "Id"),
    ("ctr.col.parts", "แยกตาม", "Per"),
    ("ctr.col.period", "รอบการนับ", "Period"),
    ("ctr.col.last", "เลขล่าสุด", "Last number"),
    ("ctr.col.max", "สูงสุด", "Maximum"),
    ("ctr.col.use", "ใช้ไปแล้ว", "Utilization"),
    ("ctr.open", "ดูเลขที่", "Numbers"),
    ("ctr.numbers", "เลขที่ที่ออกจากตัวนับนี้", "Numbers issued by this counter"),
    ("ctr.col.seq", "ลำดับ", "Seq."),
    ("ctr.col.number", "เลขที่เอกสาร", "Document number"),
    ("ctr.col.status", "สถานะ", "Status"),
    ("ctr.col.document", "รหัสเอกสาร", "Document"),
    ("ctr.col.time", "เวลา", "Time"),
    ("ctr.col.note", "หมายเหตุ", "Note"),
    ("ctr.col.receipt", "ใบรับรอง", "Receipt"),
    ("ctr.stamp", "ตราประทับ", "Stamp"),
    ("ctr.gaps", "ลำดับที่ไม่มีเลขที่ในระบบ และบันทึกที่อธิบาย", "Missing sequences and the audit row that explains each"),
    ("ctr.gaps.none", "ไม่มีลำดับที่ขาดหาย", "No missing sequence"),
    ("ctr.gap.unexplained", "ไม่มีบันทึกอธิบาย", "unexplained"),
    ("ctr.released", "เลขที่ที่ถูกปล่อยคืนโดยการรีเซ็ต", "Numbers released by a reset"),
    ("ctr.first", "« เริ่มต้น", "« First"),
    ("ctr.more", "ลำดับถัดไป ›", "Next sequences ›"),
    ("st.RESERVED", "จองไว้", "reserved"),
    ("st.CONFIRMED", "ยืนยันแล้ว", "confirmed"),
    ("st.CANCELLED", "ยกเลิก", "cancelled"),
    ("st.VOID", "ถูกยกเลิก (VOID)", "void"),
    ("ops.title", "การดำเนินการของผู้ดูแลระบบสูงสุด", "Super-admin operations"),
    ("ops.revise", "ออกฉบับแก้ไข (REV ถัดไป)", "Revise (next REV)"),
    ("ops.void", "ยกเลิกและออกเลขใหม่", "Void and replace"),
    ("ops.void.reason", "เหตุผลที่ยกเลิก (บังคับ)", "Reason for voiding (required)"),
    ("ops.document_id", "รหัสเอกสาร (ไม่ระบุ = ใช้ของเลขเดิม)", "Document id (empty = the original's)"),
    ("ops.void.confirm", "ยืนยันการยกเลิกและออกเลขใหม่", "Void and issue a replacement"),
    ("ops.revised", "ออกฉบับแก้ไขแล้ว", "Revision issued"),
    ("ops.voided", "ยกเลิกแล้ว เลขใหม่", "Voided; replacement"),
    ("ops.void.only", "ยกเลิกโดยไม่ออกเลขใหม่", "Void without a replacement"),
    ("ops.voided.only", "ยกเลิกแล้ว ไม่ออกเลขใหม่ (เลขนี้จะไม่ถูกใช้อีก)", "Voided, no replacement (this number is never used again)"),
    ("ops.reset", "ขอรีเซ็ตตัวนับ", "Request a counter reset"),
    ("ops.reset.value", "ค่าใหม่ของตัวนับ (ค่าเริ่มต้น 0)", "New counter value (default 0)"),
    ("ops.reset.reason", "เหตุผล (อย่างน้อย 20 ตัวอักษร)", "Reason (at least 20 characters)"),
    ("ops.reset.chars", "ตัวอักษร", "characters"),
    ("ops.reset.submit", "ส่งคำขอรีเซ็ต", "Send the reset request"),
    ("ops.reset.sent", "ส่งคำขอรีเซ็ตแล้ว รอผู้ดูแลระบบสูงสุดอีกคนหนึ่งอนุมัติ — คำขอที่", "Reset requested; another super admin must approve it — request"),
    ("ops.reset.go", "ไปหน้าคำขอรีเซ็ต", "Go to reset requests"),
    ("ops.override", "กำหนดเลขเอง (manual override)", "Manual override"),
    ("ops.override.number", "เลขที่เอกสารเดิม (พิมพ์เอง)", "Legacy document number (typed)"),
    ("ops.override.reason", "เหตุผล (บังคับ)", "Reason (required)"),
    ("ops.override.register", "ลงทะเบียนเลขที่นี้", "Register this number"),
    ("ops.override.value", "ตั้งค่าตัวนับเป็น (≥ เลขที่ออกไปแล้วสูงสุด)", "Set the counter to (≥ the highest issued)"),
    ("ops.override.set", "ตั้งค่าตัวนับ", "Set the counter"),
    ("ops.registered", "ลงทะเบียนแล้ว", "Registered"),
    ("ops.counter_set", "ตั้งค่าตัวนับแล้ว: เลขล่าสุด", "Counter set; last number"),
    ("ops.skipped", "ลำดับที่ข้าม (มีบันทึกทุกลำดับ)", "sequences passed over (each audited)"),
    ("ops.busy", "กำลังดำเนินการ…", "Working…"),
    ("rst.title", "คำขอรีเซ็ตตัวนับ", "Counter reset requests"),
    ("rst.state", "สถานะ", "State"),
    ("rst.col.id", "คำขอ", "Request"),
    ("rst.col.counter", "ตัวนับ", "Counter"),
    ("rst.col.values", "ค่าเดิม → ค่าใหม่", "Previous → new"),
    ("rst.col.reason", "เหตุผล", "Reason"),
    ("rst.col.by", "ผู้ขอ", "Requested by"),
    ("rst.col.history", "ประวัติ", "History"),
    ("rst.col.actions", "ดำเนินการ", "Actions"),
    ("rst.comment", "ความเห็น (ไม่บังคับ)", "Comment (optional)"),
    ("rst.waiting", "รอผู้ดูแลระบบสูงสุดคนอื่นพิจารณา — ผู้ขออนุมัติคำขอของตนเองไม่ได้", "Waiting for another super admin — a requester cannot approve their own request"),
    ("rst.done", "ดำเนินการแล้ว สถานะปัจจุบัน", "Done; the state is now"),
    ("rst.empty", "ไม่มีคำขอรีเซ็ต", "No reset requests"),
    ("wf.APPROVE", "อนุมัติ", "Approve"),
    ("wf.REJECT", "ไม่อนุมัติ", "Reject"),
    ("wf.REQUEST", "ขอรีเซ็ต", "Request"),
    ("wf.PENDING", "รออนุมัติ", "pending"),
    ("wf.APPROVED", "อนุมัติแล้ว", "approved"),
    ("wf.REJECTED", "ไม่อนุมัติ", "rejected"),
    // imports and reference-data admin (/import, /reference)
    ("nav.import", "นำเข้า", "Bulk import"),
    ("nav.reference", "ข้อมูลอ้างอิง", "Reference data"),
    ("import.title", "นำเข้าตัวนับและเลขที่เอกสารเดิม", "Import counters and legacy numbers"),
    ("import.help", "วางข้อมูล JSON หรือ CSV หรือเลือกไฟล์ แต่ละแถวคือเลขที่เอกสารเดิม (projectCode, correspondenceTypeCode, documentNumber, documentId) หรือค่าตัวนับ (projectCode, correspondenceTypeCode, originatorCode, recipientCode, subTypeNumber, rfaTypeCode, disciplineCode, contractCode, year, month, value) ตรวจสอบก่อน แล้วจึงนำเข้า — นำเข้าทั้งหมดหรือไม่นำเข้าเลย", "Paste JSON or CSV, or choose a file. Each row is a legacy number (projectCode, correspondenceTypeCode, documentNumber, documentId) or a counter value (projectCode, correspondenceTypeCode, originatorCode, recipientCode, subTypeNumber, rfaTypeCode, disciplineCode, contractCode, year, month, value). Check first, then import — all rows or none."),
    ("import.format", "รูปแบบข้อมูล", "Format"),
    ("import.file", "เลือกไฟล์", "Choose a file"),
    ("import.text", "ข้อมูลที่จะนำเข้า", "Data to import"),
    ("import.reason", "เหตุผล (บันทึกในบันทึกการตรวจสอบ)", "Reason (recorded in the audit log)"),
    ("import.dry_run", "ตรวจสอบ (dry run)", "Check (dry run)"),
    ("import.apply", "นำเข้า", "Import"),
    ("import.total", "ทั้งหมด", "Rows"),
    ("import.ok_rows", "ถูกต้อง", "OK"),
    ("import.error_rows", "ไม่ถูกต้อง", "Refused"),
    ("import.state.dry", "ตรวจสอบเท่านั้น — ยังไม่ได้บันทึกข้อมูล", "Checked only — nothing was saved"),
    ("import.state.applied", "นำเข้าเรียบร้อยแล้ว", "Imported"),
    ("import.state.refused", "ไม่ได้นำเข้า: มีแถวที่ไม่ถูกต้อง จึงไม่ได้บันทึกข้อมูลใดเลย", "Not imported: some rows are refused, so nothing was saved"),
    ("import.row", "แถว", "Row"),
    ("import.kind", "ชนิด", "Kind"),
    ("import.key", "รายการ", "Item"),
    ("import.action", "การดำเนินการ", "Action"),
    ("import.result", "ผล", "Result"),
    ("import.ok", "ถูกต้อง", "ok"),
    ("import.last_number", "เลขล่าสุดของตัวนับ", "Counter's last number"),
    ("ref.title", "ข้อมูลอ้างอิง", "Reference data"),
    ("ref.kind", "หมวด", "Section"),
    ("ref.kind.projects", "โครงการ", "Projects"),
    ("ref.kind.organizations", "หน่วยงาน", "Organizations"),
    ("ref.kind.correspondence-types", "ประเภทเอกสาร", "Correspondence types"),
    ("ref.kind.sub-types", "ประเภทย่อย", "Sub-types"),
    ("ref.kind.rfa-types", "ประเภท RFA", "RFA types"),
    ("ref.kind.disciplines", "สาขางาน", "Disciplines"),
    ("ref.kind.contracts", "สัญญา", "Contracts"),
    ("ref.project", "โครงการ", "Project"),
    ("ref.code", "รหัส", "Code"),
    ("ref.name", "ชื่อ", "Name"),
    ("ref.role", "บทบาท", "Role"),
    ("ref.state", "สถานะ", "State"),
    ("ref.active", "ใช้งาน", "active"),
    ("ref.inactive", "ปิดใช้งาน", "inactive"),
    ("ref.members", "หน่วยงานสมาชิก", "Member organizations"),
    ("ref.type", "ประเภทเอกสาร", "Correspondence type"),
    ("ref.number", "หมายเลข", "Number"),
    ("ref.new", "เพิ่มรายการใหม่", "New item"),
    ("ref.edit", "แก้ไข", "Edit"),
    ("ref.editing", "แก้ไขรายการ", "Edit item"),
    ("ref.creating", "สร้างรายการใหม่", "New item"),
    ("ref.save", "บันทึก", "Save"),
    ("ref.saved", "บันทึกแล้ว", "Saved"),
    ("ref.code_fixed", "รหัสเปลี่ยนไม่ได้หลังสร้าง เพราะเลขที่ที่ออกแล้วอ้างถึง", "A code cannot change once created: issued numbers refer to it"),
    ("ref.import_title", "นำเข้าข้อมูลอ้างอิงจาก JSON", "Import reference data from JSON"),
    ("ref.import_help", "เอกสาร JSON มีหมวด organizations, correspondenceTypes, subTypes, rfaTypes, disciplines, projects, contracts (ไม่บังคับทุกหมวด) รายการที่มีรหัสอยู่แล้วจะถูกแก้ไข ที่ยังไม่มีจะถูกสร้าง — ทั้งหมดหรือไม่เลย", "A JSON document with sections organizations, correspondenceTypes, subTypes, rfaTypes, disciplines, projects, contracts (all optional). Items whose code exists are updated, others created — all or nothing."),
];

/// The word for `key` in `lang`; the key itself if the dictionary lacks it (a debug build also logs a warning;
/// the test `every_key_the_pages_use_is_in_both_languages` keeps that from happening).
pub fn word(lang: Lang, key: &'static str) -> &'static str {
    match WORDS.iter().find(|(k, _, _)| *k == key) {
        Some((_, th, en)) => match lang {
            Lang::Th => th,
            Lang::En => en,
        },
        None => {
            #[cfg(debug_assertions)]
            leptos::logging::warn!("i18n: no word for the key {key:?}");
            key
        }
    }
}

/// The language signal, provided once by `App`.
#[derive(Clone, Copy)]
pub struct I18n {
    pub lang: RwSignal<Lang>,
}

impl I18n {
    /// The word for `key` in the current language (tracks the language).
    pub fn t(&self, key: &'static str) -> &'static str {
        // `try_get`: a server render whose client left goes on in its own task a moment after its tree is cleaned
        // up (the page's title is read last); the words then go nowhere, and need not panic
        word(self.lang.try_get().unwrap_or_default(), key)
    }

    pub fn set(&self, lang: Lang) {
        self.lang.set(lang);
        store_lang(lang);
    }
}

pub fn use_i18n() -> I18n {
    use_context::<I18n>().expect("I18n is provided by App")
}

/// Creates the language signal from the cookie (request header on the server, `document.cookie`
/// in the browser, so both render the same words) and provides it as context.
pub fn provide_i18n() -> I18n {
    let i18n = I18n { lang: RwSignal::new(initial_lang()) };
    provide_context(i18n);
    i18n
}

#[cfg(feature = "ssr")]
pub(super) fn initial_lang() -> Lang {
    use_context::<axum::http::request::Parts>().map(|parts| crate::server::error::page_lang(&parts.headers)).unwrap_or_default()
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
pub(super) fn initial_lang() -> Lang {
    Lang::from_cookie_header(&crate::app::browser::document_cookie())
}

#[cfg(not(any(feature = "ssr", feature = "hydrate")))]
pub(super) fn initial_lang() -> Lang {
    Lang::Th
}

fn store_lang(lang: Lang) {
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        crate::app::browser::set_document_cookie(&lang.cookie());
        crate::app::browser::set_html_lang(lang.code());
    }
    #[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
    let _ = lang;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_parsing() {
        assert_eq!(Lang::from_cookie_header(""), Lang::Th);
        assert_eq!(Lang::from_cookie_header("a=b; docnum_lang=en"), Lang::En);
        assert_eq!(Lang::from_cookie_header("docnum_lang=th; x=1"), Lang::Th);
    }

    #[test]
    fn every_key_is_unique() {
        for (i, (k, _, _)) in WORDS.iter().enumerate() {
            assert!(WORDS[i + 1..].iter().all(|(k2, _, _)| k2 != k), "duplicate key {k}");
        }
    }

    /// Both languages have the same keys: every entry has a Thai and an English word.
    #[test]
    fn both_languages_have_every_key() {
        for (k, th, en) in WORDS {
            assert!(looks_like_key(k), "the dictionary key {k:?} does not look like a key");
            assert!(!th.trim().is_empty(), "no Thai word for {k}");
            assert!(!en.trim().is_empty(), "no English word for {k}");
        }
    }

    /// `area.name[.more]`: lower-case area, then parts of letters, digits, `_` and `-`
    /// (e.g. `tpl.kp.YEARLY`, `ref.kind.sub-types`).
    fn looks_like_key(s: &str) -> bool {
        let mut parts = s.split('.');
        let area = parts.next().unwrap_or_default();
        let rest: Vec<&str> = parts.collect();
        !area.is_empty()
            && area.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            && !rest.is_empty()
            && rest.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    }

    /// The string literals of Rust source that look like keys (comment lines skipped). The pages pass keys only
    /// as literals (`t` takes a `&'static str`): directly, through a `match` that picks one, or as a prop
    /// (`label="tpl.project"`), so every key a page can show is one of these.
    fn key_literals(source: &str) -> Vec<String> {
        let mut found = Vec::new();
        for line in source.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let mut chars = line.chars();
            let mut current: Option<String> = None;
            while let Some(c) = chars.next() {
                match (&mut current, c) {
                    (None, '"') => current = Some(String::new()),
                    (Some(lit), '"') => {
                        if looks_like_key(lit) {
                            found.push(lit.clone());
                        }
                        current = None;
                    }
                    (Some(lit), '\\') => {
                        lit.push('\\');
                        lit.extend(chars.next());
                    }
                    (Some(lit), c) => lit.push(c),
                    (None, _) => {}
                }
            }
        }
        found
    }

    /// The keys in `source` the dictionary lacks.
    fn missing_keys(source: &str) -> Vec<String> {
        key_literals(source).into_iter().filter(|k| !WORDS.iter().any(|(w, _, _)| w == k)).collect()
    }

    /// Every `.rs` file under `dir`, as (path, text).
    fn sources(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).expect("a readable source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a readable source file");
                out.push((path.display().to_string(), text));
            }
        }
    }

    #[test]
    fn the_key_scan_finds_keys_and_misses() {
        let page = r#"
            view! { <h1>{move || i18n.t("tpl.title")}</h1> <IdSelect label="ref.kind.sub-types"/> }
            let k = match s { ResetScope::Yearly => "tpl.kp.YEARLY", _ => "tpl.no_such_word" };
            // a comment naming "tpl.in_a_comment" is not a use
            let not_keys = ("/pkg/docnum.css", "a b.c", "Tpl.x", "x", "{PROJECT}-{SEQ:4}", "\"q.r\"");
        "#;
        assert_eq!(key_literals(page), ["tpl.title", "ref.kind.sub-types", "tpl.kp.YEARLY", "tpl.no_such_word"]);
        assert_eq!(missing_keys(page), ["tpl.no_such_word"]);
    }

    /// Every key the pages under `src/app/` use is in the dictionary (and so, by the test above, in both
    /// languages); a missing one would show as the key itself.
    #[test]
    fn every_key_the_pages_use_is_in_both_languages() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app");
        let mut files = Vec::new();
        sources(&dir, &mut files);
        assert!(files.len() > 10, "the pages were not found under {}", dir.display());
        let mut used = 0;
        let mut missing = Vec::new();
        for (path, text) in files.iter().filter(|(p, _)| !p.ends_with("i18n.rs")) {
            used += key_literals(text).len();
            missing.extend(missing_keys(text).into_iter().map(|k| format!("{k} ({path})")));
        }
        assert!(used > 100, "only {used} keys found: the scan is broken");
        assert!(missing.is_empty(), "keys missing from the dictionary: {missing:#?}");
    }
}
