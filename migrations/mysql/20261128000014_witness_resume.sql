-- Resuming a counter past its witnessed head (SPEC §7): a super admin's approval, recorded as a workflow instance
-- with its event; the approval itself moves the counter (admin_ops::resume_past_witness).
INSERT INTO workflow_transitions (workflow_code, from_state, action, to_state, required_role, actor_rule) VALUES
    ('WITNESS_RESUME', 'NEW', 'APPROVE', 'RESUMED', 'SUPER_ADMIN', 'ANY');
