//! Details of a workflow step: an action its instance's state does not allow, a step taken by someone else first, an
//! instance that does not exist.

crate::details! {
    /// What the workflow engine refuses.
    pub enum WorkflowDetail {
        ActionNotAllowed { action, state } =>
            "ไม่สามารถดำเนินการนี้ ({action}) ได้ในสถานะปัจจุบัน ({state}) กรุณาตรวจสอบขั้นตอนการอนุมัติ",
            "the action {action} cannot be taken in the current state ({state}); please check the approval steps";
        /// The instance moved between its read and its step (someone else took a step on it).
        TakenByOthers => "รายการนี้ถูกดำเนินการโดยผู้อื่นแล้ว กรุณาโหลดข้อมูลใหม่",
            "this item has already been acted on by someone else; please reload the data";
        InstanceNotFound { id } => "รายการในขั้นตอนอนุมัติ {id}", "workflow instance {id}";
    }
}
