//! Details of numbering: a numbering request refused (reserve, generate, confirm, cancel, blocks, back-dating, the
//! `Idempotency-Key` header, a batch forwarded to a counter's lock holder), a number's lifecycle refusing an action,
//! and the administrative writes on a number or a counter (revise, manual override, a counter's reset).

crate::details! {
    /// What numbering says: why a request to number, or to act on a number or a counter, was refused.
    pub enum NumberingDetail {
        // ---- words, arguments of the sentences below
        /// The sending organisation, as [`NumberingDetail::NotProjectMember`] names it.
        PartOriginator => "หน่วยงานผู้ส่ง", "originator";
        /// The receiving organisation, as [`NumberingDetail::NotProjectMember`] names it.
        PartRecipient => "หน่วยงานผู้รับ", "recipient";
        /// The reason of [`NumberingDetail::ForwardedBatchInvalid`]: a job for another counter than its batch's.
        ForwardedIssueOfAnotherCounter => "มีงานออกเลขของตัวนับอื่นที่ไม่ใช่ตัวนับของชุดงาน", "an issue for another counter than its batch's";

        // ---- resolving a request
        ProjectInactive { project } => "โครงการ {project} ปิดใช้งานแล้ว", "project {project} is inactive";
        /// The stored template of the request's project and type does not parse: `errors` are the parser's.
        StoredTemplateInvalid { template, errors } => "รูปแบบที่บันทึกไว้ '{template}': {errors}", "stored template '{template}': {errors}";
        /// `part` is a word: [`NumberingDetail::PartOriginator`] or [`NumberingDetail::PartRecipient`].
        NotProjectMember { part, code, project } => "{part} {code} ไม่ได้เป็นสมาชิกของโครงการ {project}",
            "{part} {code} is not a member of project {project}";
        RevisionInvalid { given } => "รหัสฉบับแก้ไข '{given}' ไม่ถูกต้อง (ใช้ A–Z, AA, AB, …)", "invalid revision label '{given}' (A-Z, AA, AB, ...)";
        BackdateWithoutYear => "การออกเลขย้อนหลังต้องระบุปี (year) ของรอบที่ปิดแล้ว",
            "backdateReason needs the year of the earlier period to continue";
        /// A year other than the current one without a back-dating reason; `year_be` is `year` in the Buddhist era.
        YearNotCurrent { asked, year, year_be } =>
            "ปีที่ระบุ ({asked}) ต้องเป็นปีปัจจุบัน ({year} หรือ พ.ศ. {year_be}) — การออกเลขย้อนหลังต้องระบุเหตุผล (backdateReason) และทำได้เฉพาะผู้ดูแลระบบสูงสุด",
            "year {asked} is not the current year {year} (B.E. {year_be}); back-dating needs a super admin and a backdateReason";
        /// A request that names no project, whose originator belongs to no active project it could number in.
        OriginatorInNoProject { originator } => "ต้องระบุโครงการ — หน่วยงานผู้ส่ง {originator} ไม่ได้เป็นสมาชิกของโครงการใดที่เปิดใช้งาน",
            "missing projectId or projectCode: originator {originator} belongs to no active project";
        /// A request that names no project, whose originator belongs to several: `projects` lists their codes.
        OriginatorInSeveralProjects { originator, projects } => "ต้องระบุโครงการ — หน่วยงานผู้ส่ง {originator} เป็นสมาชิกของหลายโครงการ: {projects}",
            "missing projectId or projectCode: originator {originator} belongs to several active projects: {projects}";
        /// `item` counts the addressees of `recipients` from 1.
        RecipientTypeUnknown { item, given } => "ผู้รับรายการที่ {item}: ประเภทผู้รับ '{given}' ไม่ถูกต้อง (ใช้ TO หรือ CC)",
            "recipient no. {item}: recipientType '{given}' is neither TO nor CC";
        RecipientsTwoWays => "ระบุผู้รับได้ทางเดียว: recipients หรือ recipientOrgId/recipientCode อย่างใดอย่างหนึ่ง",
            "give either recipients or recipientOrgId/recipientCode, not both";
        TooManyRecipients { max } => "ระบุผู้รับได้ไม่เกิน {max} รายการ", "at most {max} recipients";
        /// `item` counts the addressees of `recipients` from 1.
        RecipientWithoutOrganization { item } => "ผู้รับรายการที่ {item} ต้องระบุหน่วยงาน (organizationId หรือ organizationCode)",
            "recipient no. {item} must name its organization (organizationId or organizationCode)";
        /// Back-dating into a template whose counter does not restart by year; `scope` is its reset scope.
        BackdateNotByYear { scope } => "ออกเลขย้อนหลังได้เฉพาะตัวนับที่เริ่มใหม่ทุกปีหรือทุกปีงบประมาณ (รูปแบบนี้เริ่มใหม่แบบ {scope})",
            "back-dating continues a closed calendar or fiscal year; this template resets {scope}";
        /// `current_be` is `current` in the Buddhist era.
        BackdateNotEarlier { asked, current, current_be } =>
            "ปี {asked} ยังไม่ปิด: ออกเลขย้อนหลังได้เฉพาะรอบก่อนรอบปัจจุบัน ({current} / พ.ศ. {current_be})",
            "year {asked} is not an earlier, closed period (the current one is {current} / B.E. {current_be})";
        BackdateReasonTooLong { max } => "เหตุผลของการออกเลขย้อนหลังต้องยาวไม่เกิน {max} ตัวอักษร",
            "backdateReason must be at most {max} printable characters";

        // ---- reserve a block, confirm, cancel
        BlockCountOutOfRange { min, max, given } => "จำนวนเลขที่ในชุด (count) ต้องเป็น {min}–{max} (ได้ {given})",
            "count must be {min}-{max}, got {given}";
        BlockHoldOutOfRange { days } => "เวลาสิ้นสุดการถือเลขที่ (holdUntil) ต้องอยู่ในอนาคต และไม่เกิน {days} วันจากนี้",
            "holdUntil must be in the future and at most {days} days away";
        BlockHolderTooLong { max } => "ผู้ถือชุดเลขที่ (holder) ต้องยาวไม่เกิน {max} ตัวอักษร", "holder must be at most {max} printable characters";
        CancelReasonTooLong { max } => "เหตุผลยาวเกิน {max} ตัวอักษร", "reason longer than {max} characters";
        TokenMalformed { given } => "รหัสการจอง (token) '{given}' ไม่ถูกต้อง", "malformed reservation token '{given}'";
        DocumentIdMissing => "ต้องระบุรหัสเอกสาร (documentId)", "documentId is required";
        DocumentIdTooLong { max } => "รหัสเอกสารต้องยาวไม่เกิน {max} ตัวอักษร", "documentId must be at most {max} printable characters";
        /// What was not found: a reservation, by its token.
        ReservationNotFound { token } => "การจองเลขที่ (token {token})", "the reservation of a number (token {token})";

        // ---- the blocks page and its plain forms
        /// What was not found: a block, by its id.
        BlockNotFound { block } => "ไม่พบชุดเลข {block}", "no block {block}";
        BlockHoldNotADate { given } => "วันสิ้นสุดการจองต้องเป็นวันที่ (ปปปป-ดด-วว) ไม่ใช่ '{given}'",
            "holdUntil must be a date (YYYY-MM-DD), not '{given}'";
        /// A date that reads, but whose end of day is past the calendar's range.
        BlockHoldDateOutOfRange => "วันสิ้นสุดการจองไม่ถูกต้อง", "holdUntil is out of range";
        BlockCountNotWhole { given } => "จำนวนเลขในชุด (count) ต้องเป็นจำนวนเต็ม ไม่ใช่ '{given}'", "count must be a whole number, not '{given}'";

        // ---- a batch forwarded to a counter's lock holder
        /// What was not found: the forwarding route of an instance without a cluster secret (it is not there).
        ForwardingOff => "ที่อยู่นี้", "this address";
        ForwardedBatchInvalid { reason } => "ข้อมูลที่ส่งต่อไม่ถูกต้อง ({reason})", "the forwarded data is not valid ({reason})";
        ForwardedBatchBrokeOff { reason } => "อ่านข้อมูลที่ส่งต่อไม่ครบ ({reason})", "the forwarded data could not be read to its end ({reason})";

        // ---- the Idempotency-Key header
        IdempotencyKeyMalformed { max } =>
            "ค่า Idempotency-Key ต้องเป็นตัวอักษร ASCII ที่มองเห็นได้ 1–{max} ตัว (ไม่มีช่องว่างหรือเครื่องหมายคำพูด)",
            "Idempotency-Key must be 1-{max} visible ASCII characters (no spaces or double quotes)";
        IdempotencyKeyTwice => "ระบุ Idempotency-Key ได้ครั้งเดียว", "Idempotency-Key may be given only once";
        IdempotencyKeyReused { key } => "คีย์ Idempotency-Key นี้ ('{key}') ใช้กับคำขออื่นไปแล้ว กรุณาใช้คีย์ใหม่สำหรับคำขอใหม่",
            "this Idempotency-Key ('{key}') was used for another request; please use a new key for a new request";
        IdempotencyKeyInProgress { key } => "คำขอที่ใช้คีย์ Idempotency-Key นี้ ('{key}') กำลังดำเนินการอยู่ กรุณาลองใหม่อีกครั้ง",
            "a request with this Idempotency-Key ('{key}') is still being served; please try again";

        // ---- a number's lifecycle
        AlreadyConfirmedElsewhere { number } => "เลขที่ {number} ได้รับการยืนยันกับเอกสารอื่นแล้ว",
            "{number} is already confirmed for another document";
        ConfirmedNotCancellable { number } => "เลขที่ {number} ได้รับการยืนยันแล้ว ยกเลิกไม่ได้ (ใช้การ void แทน)",
            "{number} is confirmed and cannot be cancelled (void it instead)";
        ReservationCancelled { number } => "การจองเลขที่ {number} ถูกยกเลิกแล้ว กรุณาจองใหม่",
            "the reservation of {number} was cancelled; please reserve again";
        /// `state` is the number's lifecycle state (`CANCELLED`, `VOID`…).
        NotConfirmed { number, state } => "เลขที่ {number} มีสถานะ {state} ไม่ใช่เลขที่ยืนยันแล้ว", "{number} is {state}, not CONFIRMED";

        // ---- revise, manual override, a counter's reset
        RevisionNotInTemplate { number } => "รูปแบบของเลขที่ {number} ไม่มี {REV} จึงออกฉบับแก้ไขไม่ได้",
            "the template of {number} shows no {REV}, so it cannot be revised";
        RevisionsExhausted { number } => "เลขที่ {number} ไม่มีรหัสฉบับแก้ไขถัดไปแล้ว", "{number} has no next revision label left";
        /// A manual override below the highest number issued (`issued`).
        OverrideBelowIssued { value, issued } => "ค่าที่กำหนด ({value}) ต่ำกว่าเลขที่ออกไปแล้ว ({issued}) การลดค่าตัวนับต้องขออนุมัติรีเซ็ต",
            "value {value} is below the highest issued {issued}; lowering a counter needs an approved reset";
        OverrideSkipsTooMany { max } => "ข้ามเลขได้ครั้งละไม่เกิน {max} เลข", "an override may pass over at most {max} sequences";
        /// A reset asked for above the counter's last number.
        ResetAboveLast { value, last } =>
            "ค่าใหม่ ({value}) ต้องไม่เกินเลขล่าสุดของตัวนับ ({last}); การเลื่อนตัวนับขึ้นใช้การกำหนดเลขเอง (manual override)",
            "newValue {value} may not be above the counter's last number {last}; raising a counter is a manual override";
        /// `request` is the public id of the reset request already waiting.
        ResetAlreadyPending { request } => "ตัวนับนี้มีคำขอรีเซ็ตที่รออนุมัติอยู่แล้ว (คำขอ {request})",
            "this counter already has a reset request waiting for approval (request {request})";
        /// A reset approved when the counter's last number has gone below the value it asked for.
        ResetAboveLastNow { last, value } => "เลขล่าสุดของตัวนับ ({last}) ต่ำกว่าค่าที่ขอ ({value}) แล้ว การรีเซ็ตนี้จะทำให้เลขขาดช่วง",
            "the counter's last number ({last}) is below the requested {value} by now; this reset would leave a gap";
        ResetBelowConfirmed { value, confirmed } =>
            "ค่าใหม่ ({value}) ต่ำกว่าเลขลำดับที่ยืนยันแล้วสูงสุด ({confirmed}) ของตัวนับนี้ จะทำให้ออกเลขที่ซ้ำ",
            "newValue {value} is below the highest confirmed sequence {confirmed} of this counter; it would issue a number twice";
        /// An issued number that its own template does not read back into its parts.
        NumberDoesNotReadBack { number, template } => "อ่านส่วนประกอบของเลขที่ {number} ตามรูปแบบ {template} ไม่ได้",
            "the parts of {number} do not read back through its template {template}";
    }
}
