//! Details of reference data (projects, organizations, correspondence types, sub-types, RFA types, disciplines,
//! contracts): what its admin refuses in an item or a whole document, and what a numbering request's parts name
//! that the reference data does not hold.

crate::details! {
    /// What is wrong with an item of reference data, or with the part of a request that names one; and the words that
    /// name a kind of item or a part inside those sentences.
    pub enum ReferenceDetail {
        // the kinds of reference data (`server::reference::store::Kind`), one item of each as a sentence names it;
        // the request's parts (`server::reference::Part`) are these, and the two below
        KindProjects => "โครงการ", "project";
        KindOrganizations => "หน่วยงาน", "organization";
        KindCorrespondenceTypes => "ประเภทเอกสาร", "correspondence type";
        KindSubTypes => "ประเภทย่อย", "sub-type";
        KindRfaTypes => "ประเภท RFA", "RFA type";
        KindDisciplines => "สาขางาน", "discipline";
        KindContracts => "สัญญา", "contract";
        PartOriginator => "หน่วยงานผู้ส่ง", "originator";
        PartRecipient => "หน่วยงานผู้รับ", "recipient";

        /// The `{kind}` of `/reference/{kind}` is none of the kinds.
        UnknownKind { kind } => "ข้อมูลอ้างอิงประเภท '{kind}'", "reference data of kind '{kind}'";
        /// An item's JSON does not read as an item of its kind.
        ItemShape { reason } => "ข้อมูลไม่ตรงตามรูปแบบ ({reason})", "the data does not match the expected shape ({reason})";
        DocumentJson { line, column, reason } => "เอกสาร JSON ไม่ถูกต้อง (บรรทัด {line} ตำแหน่ง {column}): {reason}",
            "the JSON document is not valid (line {line}, column {column}): {reason}";
        DocumentEmpty => "เอกสารไม่มีรายการข้อมูลอ้างอิงให้นำเข้า", "the document holds no reference data to import";
        DocumentTooLarge { max } => "นำเข้าได้ครั้งละไม่เกิน {max} รายการ", "at most {max} items can be imported at a time";
        /// The same item twice in one document; `first` is the item of the section where it first appears.
        RepeatedItem { kind, label, first } => "{kind} '{label}' ซ้ำกับรายการที่ {first} ของหมวดเดียวกัน",
            "{kind} '{label}' repeats item {first} of the same section";
        NameLength { max } => "ชื่อต้องมี 1–{max} ตัวอักษร", "the name must have 1–{max} characters";
        FiscalFirstMonth { month } => "เดือนแรกของปีงบประมาณต้องเป็น 1–12 (ได้ {month})",
            "the first month of the fiscal year must be 1–12 (got {month})";
        OrganizationRole => "บทบาทหน่วยงานต้องเป็น OWNER, CONSULTANT, CONTRACTOR หรือ OTHER",
            "the organization's role must be OWNER, CONSULTANT, CONTRACTOR or OTHER";
        SubTypeNumber => "หมายเลขประเภทย่อยต้องเป็นตัวเลข 1–5 หลัก", "the sub-type number must be 1–5 digits";
        Exists { kind, label } => "{kind} '{label}' มีอยู่แล้ว", "{kind} '{label}' already exists";
        ItemById { kind, id } => "{kind} รหัส {id}", "{kind} with id {id}";
        ItemByCode { kind, code } => "{kind} รหัส '{code}'", "{kind} with code '{code}'";
        /// A project's member named by a code that no organization has.
        UnknownMember { code } => "หน่วยงาน รหัส '{code}' (สมาชิกของโครงการ)", "organization with code '{code}' (a member of the project)";
        /// An edit would change an item's code (`stored`, the code it keeps).
        CodeFixed { kind, stored } =>
            "รหัสของ{kind}เปลี่ยนไม่ได้ (รหัสเดิม '{stored}') เพราะเลขที่เอกสารที่ออกแล้วอ้างถึงรหัสนี้ — สร้างรายการใหม่แทน",
            "the {kind}'s code cannot change (the original code is '{stored}'): issued document numbers refer to it — create a new item instead";
        SubTypeFixed => "ประเภทเอกสารและหมายเลขของประเภทย่อยเปลี่ยนไม่ได้ เพราะเลขที่เอกสารที่ออกแล้วอ้างถึง — สร้างรายการใหม่แทน",
            "a sub-type's correspondence type and number cannot change: issued document numbers refer to them — create a new item instead";

        SubTypeOfOtherType { number } => "ประเภทย่อย {number} ไม่ได้อยู่ในประเภทเอกสารที่เลือก",
            "sub-type {number} does not belong to the chosen correspondence type";
        ContractByCode { contract, project } => "สัญญา '{contract}' ในโครงการ {project}", "contract '{contract}' in project {project}";
        /// A request names no contract, and its project's template numbers per contract.
        ContractMissing { project } => "ต้องระบุสัญญา (contractId หรือ contractCode): รูปแบบเลขที่ของโครงการ {project} แยกหรือแสดงเลขตามสัญญา",
            "missing required part: contract (contractId or contractCode): the template of project {project} counts or shows numbers per contract";
        ContractOfOtherProject { contract, project } => "สัญญา {contract} ไม่ได้อยู่ในโครงการ {project}",
            "contract {contract} does not belong to project {project}";
        ContractInactive { contract } => "สัญญา {contract} ปิดใช้งานแล้ว", "contract {contract} is inactive";
        /// A request names a part by neither of its fields (by id, by code).
        PartMissing { part, id_field, code_field } => "ต้องระบุ{part} ({id_field} หรือ {code_field})",
            "missing required part: {part} ({id_field} or {code_field})";
        /// A request names a part by an id or a code (`value`) that nothing has.
        PartUnknown { part, value, id_field, code_field } => "{part} '{value}' ({id_field} หรือ {code_field})",
            "{part} '{value}' ({id_field} or {code_field})";
    }
}
