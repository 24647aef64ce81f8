//! Details of logins, users, the login page's forms and API tokens.

crate::details! {
    /// What the access layer says of a login, a user, a form or an API token it refuses or cannot find.
    pub enum AccessDetail {
        LoginOutcomeUnknown { outcomes } => "ผลการเข้าสู่ระบบต้องเป็นหนึ่งใน {outcomes}", "the login outcome must be one of {outcomes}";
        /// A username searched for in the record of logins.
        SearchedUsernameTooLong { max } => "ชื่อผู้ใช้ยาวเกิน {max} ตัวอักษร", "username longer than {max} characters";
        /// A post of the login page's or the header's plain HTML forms that is not a form.
        LanguageUnknown => "ภาษาต้องเป็น th หรือ en", "the language must be th or en";
        UsernameTaken { username } => "ชื่อผู้ใช้ '{username}' มีอยู่แล้ว", "the username '{username}' exists already";
        /// A project an API token was to be scoped to.
        TokenProject { id } => "โครงการ '{id}'", "project '{id}'";
        TokenNameLength => "ชื่อ token ต้องมี 1–100 ตัวอักษร", "a token's name must have 1–100 characters";
        /// An API token to revoke that is not there, or not active.
        ActiveToken { id } => "API token {id} (หรือถูกเพิกถอนแล้ว)", "API token {id} (or it was revoked)";
        UsernameShape => "ชื่อผู้ใช้ต้องมี 1–50 ตัวอักษรและไม่มีช่องว่าง", "username must be 1-50 characters without spaces";
        DisplayNameTooLong => "ชื่อที่แสดงยาวเกิน 200 ตัวอักษร", "display name longer than 200 characters";
        RoleUnknown => "บทบาทต้องเป็น STAFF, PROJECT_ADMIN หรือ SUPER_ADMIN", "role must be STAFF, PROJECT_ADMIN or SUPER_ADMIN";
        PasswordTooLong { max } => "รหัสผ่านยาวเกิน {max} ตัวอักษร", "password longer than {max} characters";
        PasswordTooShort { min } => "รหัสผ่านต้องมีอย่างน้อย {min} ตัวอักษร", "password must have at least {min} characters";
        User { id } => "ผู้ใช้ {id}", "user {id}";
        Project { id } => "โครงการ {id}", "project {id}";
        LastSuperAdmin { username } => "'{username}' เป็นผู้ดูแลระบบสูงสุด (SUPER_ADMIN) คนสุดท้ายที่ใช้งานได้ ต้องมีอย่างน้อยหนึ่งคน",
            "'{username}' is the last active super admin (SUPER_ADMIN); there must be at least one";
        OwnRole => "เปลี่ยนบทบาทของตนเองไม่ได้ ให้ผู้ดูแลระบบสูงสุดคนอื่นเปลี่ยนให้",
            "a super admin cannot change their own role; another super admin must change it";
        DeactivateSelf => "ปิดการใช้งานบัญชีของตนเองไม่ได้", "a super admin cannot deactivate their own account";
        PasswordUnchanged => "รหัสผ่านใหม่ต้องต่างจากรหัสผ่านปัจจุบัน", "the new password must differ from the current one";
    }
}
