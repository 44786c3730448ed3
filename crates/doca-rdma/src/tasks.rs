//! RDMA's task types, declared once ([`rdma_task_table!`](crate::rdma_task_table)):
//! their inputs in the C `allocate_init` order, record slots as [`slot`](crate::slot)
//! says, and the 3.x names. Results (a receive's length, opcode, immediate and
//! connection; a read's length) come back in the completed record and the finish hooks
//! keep them in the task for its getters. The DOCA 2.2 jobs (`c22`) are the same
//! records, from the 2.2 job structs (which name no connection: a 2.2 context has one).

/// The RDMA task table, handed to a generator (`doca_core::task_specs`, or a C face's
/// own). A connection is a `handle` input in parameter 0.
#[macro_export]
macro_rules! rdma_task_table {
    ($gen:path) => {
        $gen! {
            lib: "rdma",
            capability: Rdma,
            topology: "rdma",
            c3_handle: doca_rdma3,
            tasks: [
                {
                    spec: SEND @ $crate::tasks::SEND,
                    module: send,
                    name: "send",
                    job: $crate::JOB_SEND,
                    job_types: [send = $crate::JOB_SEND],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_send_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_send_set_rdma_connection,
                        opt_buf src_buf: 0 (*const doca_buf)
                            get doca_rdma_task_send_get_src_buf
                            set doca_rdma_task_send_set_src_buf,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_send,
                        cb: doca_rdma_task_send_completion_cb_t,
                        set_conf: doca_rdma_task_send_set_conf (num),
                        alloc_init: doca_rdma_task_send_allocate_init,
                        as_task: doca_rdma_task_send_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_send_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_send { src_buff: src_buf } },
                },
                {
                    spec: SEND_IMM @ $crate::tasks::SEND_IMM,
                    module: send_imm,
                    name: "send_imm",
                    job: $crate::JOB_SEND_IMM,
                    job_types: [send_imm = $crate::JOB_SEND_IMM],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_send_imm_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_send_imm_set_rdma_connection,
                        opt_buf src_buf: 0 (*const doca_buf)
                            get doca_rdma_task_send_imm_get_src_buf
                            set doca_rdma_task_send_imm_set_src_buf,
                        param immediate_data: 1 (doca_be32_t)
                            get doca_rdma_task_send_imm_get_immediate_data
                            set doca_rdma_task_send_imm_set_immediate_data,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_send_imm,
                        cb: doca_rdma_task_send_imm_completion_cb_t,
                        set_conf: doca_rdma_task_send_imm_set_conf (num),
                        alloc_init: doca_rdma_task_send_imm_allocate_init,
                        as_task: doca_rdma_task_send_imm_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_send_imm_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_send { src_buff: src_buf, immediate_data: immediate_data } },
                },
                {
                    spec: RECEIVE @ $crate::tasks::RECEIVE,
                    module: receive,
                    name: "receive",
                    job: $crate::JOB_RECV,
                    job_types: [receive = $crate::JOB_RECV],
                    inputs: [
                        opt_buf dst_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_receive_get_dst_buf
                            set doca_rdma_task_receive_set_dst_buf,
                    ],
                    write_back: [],
                    hooks: $crate::tasks::hooks::RECEIVE,
                    c3: {
                        task: doca_rdma_task_receive,
                        cb: doca_rdma_task_receive_completion_cb_t,
                        set_conf: doca_rdma_task_receive_set_conf (num),
                        alloc_init: doca_rdma_task_receive_allocate_init,
                        as_task: doca_rdma_task_receive_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_receive_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_recv { dst_buff: dst_buf } },
                },
                {
                    spec: READ @ $crate::tasks::READ,
                    module: read,
                    name: "read",
                    job: $crate::JOB_READ,
                    job_types: [read = $crate::JOB_READ],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_read_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_read_set_rdma_connection,
                        opt_buf src_buf: 0 (*const doca_buf)
                            get doca_rdma_task_read_get_src_buf
                            set doca_rdma_task_read_set_src_buf,
                        opt_buf dst_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_read_get_dst_buf
                            set doca_rdma_task_read_set_dst_buf,
                    ],
                    write_back: [],
                    hooks: $crate::tasks::hooks::READ,
                    c3: {
                        task: doca_rdma_task_read,
                        cb: doca_rdma_task_read_completion_cb_t,
                        set_conf: doca_rdma_task_read_set_conf (num),
                        alloc_init: doca_rdma_task_read_allocate_init,
                        as_task: doca_rdma_task_read_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_read_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_read_write { src_buff: src_buf, dst_buff: dst_buf } },
                },
                {
                    spec: WRITE @ $crate::tasks::WRITE,
                    module: write,
                    name: "write",
                    job: $crate::JOB_WRITE,
                    job_types: [write = $crate::JOB_WRITE],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_write_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_write_set_rdma_connection,
                        opt_buf src_buf: 0 (*const doca_buf)
                            get doca_rdma_task_write_get_src_buf
                            set doca_rdma_task_write_set_src_buf,
                        opt_buf dst_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_write_get_dst_buf
                            set doca_rdma_task_write_set_dst_buf,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_write,
                        cb: doca_rdma_task_write_completion_cb_t,
                        set_conf: doca_rdma_task_write_set_conf (num),
                        alloc_init: doca_rdma_task_write_allocate_init,
                        as_task: doca_rdma_task_write_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_write_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_read_write { src_buff: src_buf, dst_buff: dst_buf } },
                },
                {
                    spec: WRITE_IMM @ $crate::tasks::WRITE_IMM,
                    module: write_imm,
                    name: "write_imm",
                    job: $crate::JOB_WRITE_IMM,
                    job_types: [write_imm = $crate::JOB_WRITE_IMM],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_write_imm_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_write_imm_set_rdma_connection,
                        opt_buf src_buf: 0 (*const doca_buf)
                            get doca_rdma_task_write_imm_get_src_buf
                            set doca_rdma_task_write_imm_set_src_buf,
                        opt_buf dst_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_write_imm_get_dst_buf
                            set doca_rdma_task_write_imm_set_dst_buf,
                        param immediate_data: 1 (doca_be32_t)
                            get doca_rdma_task_write_imm_get_immediate_data
                            set doca_rdma_task_write_imm_set_immediate_data,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_write_imm,
                        cb: doca_rdma_task_write_imm_completion_cb_t,
                        set_conf: doca_rdma_task_write_imm_set_conf (num),
                        alloc_init: doca_rdma_task_write_imm_allocate_init,
                        as_task: doca_rdma_task_write_imm_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_write_imm_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_read_write { src_buff: src_buf, dst_buff: dst_buf, immediate_data: immediate_data } },
                },
                {
                    spec: ATOMIC_CMP_SWP @ $crate::tasks::ATOMIC_CMP_SWP,
                    module: atomic_cmp_swp,
                    name: "atomic_cmp_swp",
                    job: $crate::JOB_ATOMIC_CMP_SWP,
                    job_types: [atomic_cmp_swp = $crate::JOB_ATOMIC_CMP_SWP],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_atomic_cmp_swp_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_atomic_cmp_swp_set_rdma_connection,
                        buf dst_buf: 0 (*mut doca_buf)
                            get doca_rdma_task_atomic_cmp_swp_get_dst_buf
                            set doca_rdma_task_atomic_cmp_swp_set_dst_buf,
                        buf result_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_atomic_cmp_swp_get_result_buf
                            set doca_rdma_task_atomic_cmp_swp_set_result_buf,
                        param cmp_data: 1 (u64)
                            get doca_rdma_task_atomic_cmp_swp_get_cmp_data
                            set doca_rdma_task_atomic_cmp_swp_set_cmp_data,
                        param swap_data: 2 (u64)
                            get doca_rdma_task_atomic_cmp_swp_get_swap_data
                            set doca_rdma_task_atomic_cmp_swp_set_swap_data,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_atomic_cmp_swp,
                        cb: doca_rdma_task_atomic_cmp_swp_completion_cb_t,
                        set_conf: doca_rdma_task_atomic_cmp_swp_set_conf (num),
                        alloc_init: doca_rdma_task_atomic_cmp_swp_allocate_init,
                        as_task: doca_rdma_task_atomic_cmp_swp_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_atomic_cmp_swp_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_atomic { cmp_or_add_dest_buff: dst_buf, result_buff: result_buf, swap_or_add_data: swap_data, cmp_data: cmp_data } },
                },
                {
                    spec: ATOMIC_FETCH_ADD @ $crate::tasks::ATOMIC_FETCH_ADD,
                    module: atomic_fetch_add,
                    name: "atomic_fetch_add",
                    job: $crate::JOB_ATOMIC_FETCH_ADD,
                    job_types: [atomic_fetch_add = $crate::JOB_ATOMIC_FETCH_ADD],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_atomic_fetch_add_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_atomic_fetch_add_set_rdma_connection,
                        buf dst_buf: 0 (*mut doca_buf)
                            get doca_rdma_task_atomic_fetch_add_get_dst_buf
                            set doca_rdma_task_atomic_fetch_add_set_dst_buf,
                        buf result_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_atomic_fetch_add_get_result_buf
                            set doca_rdma_task_atomic_fetch_add_set_result_buf,
                        param add_data: 1 (u64)
                            get doca_rdma_task_atomic_fetch_add_get_add_data
                            set doca_rdma_task_atomic_fetch_add_set_add_data,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_atomic_fetch_add,
                        cb: doca_rdma_task_atomic_fetch_add_completion_cb_t,
                        set_conf: doca_rdma_task_atomic_fetch_add_set_conf (num),
                        alloc_init: doca_rdma_task_atomic_fetch_add_allocate_init,
                        as_task: doca_rdma_task_atomic_fetch_add_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_atomic_fetch_add_is_supported,
                        ],
                    },
                    c22: { doca_rdma_job_atomic { cmp_or_add_dest_buff: dst_buf, result_buff: result_buf, swap_or_add_data: add_data } },
                },
                {
                    spec: SYNC_EVENT_GET @ $crate::tasks::SYNC_EVENT_GET,
                    module: remote_net_sync_event_get,
                    name: "remote_net_sync_event_get",
                    job: $crate::JOB_SYNC_EVENT_GET,
                    job_types: [remote_net_sync_event_get = $crate::JOB_SYNC_EVENT_GET],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_remote_net_sync_event_get_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_remote_net_sync_event_get_set_rdma_connection,
                        handle event: 2 (*const doca_sync_event_remote_net)
                            get doca_rdma_task_remote_net_sync_event_get_get_sync_event
                            set doca_rdma_task_remote_net_sync_event_get_set_sync_event,
                        buf dst_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_remote_net_sync_event_get_get_dst_buf
                            set doca_rdma_task_remote_net_sync_event_get_set_dst_buf,
                    ],
                    write_back: [],
                    hooks: $crate::tasks::hooks::READ,
                    c3: {
                        task: doca_rdma_task_remote_net_sync_event_get,
                        cb: doca_rdma_task_remote_net_sync_event_get_completion_cb_t,
                        set_conf: doca_rdma_task_remote_net_sync_event_get_set_conf (num),
                        alloc_init: doca_rdma_task_remote_net_sync_event_get_allocate_init,
                        as_task: doca_rdma_task_remote_net_sync_event_get_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_remote_net_sync_event_get_is_supported,
                        ],
                    },
                    c22: {},
                },
                {
                    spec: SYNC_EVENT_NOTIFY_SET @ $crate::tasks::SYNC_EVENT_NOTIFY_SET,
                    module: remote_net_sync_event_notify_set,
                    name: "remote_net_sync_event_notify_set",
                    job: $crate::JOB_SYNC_EVENT_NOTIFY_SET,
                    job_types: [remote_net_sync_event_notify_set = $crate::JOB_SYNC_EVENT_NOTIFY_SET],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_remote_net_sync_event_notify_set_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_remote_net_sync_event_notify_set_set_rdma_connection,
                        handle event: 2 (*mut doca_sync_event_remote_net)
                            get doca_rdma_task_remote_net_sync_event_notify_set_get_sync_event
                            set doca_rdma_task_remote_net_sync_event_notify_set_set_sync_event,
                        buf src_buf: 0 (*const doca_buf)
                            get doca_rdma_task_remote_net_sync_event_notify_set_get_src_buf
                            set doca_rdma_task_remote_net_sync_event_notify_set_set_src_buf,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_remote_net_sync_event_notify_set,
                        cb: doca_rdma_task_remote_net_sync_event_notify_set_completion_cb_t,
                        set_conf: doca_rdma_task_remote_net_sync_event_notify_set_set_conf (num),
                        alloc_init: doca_rdma_task_remote_net_sync_event_notify_set_allocate_init,
                        as_task: doca_rdma_task_remote_net_sync_event_notify_set_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_remote_net_sync_event_notify_set_is_supported,
                        ],
                    },
                    c22: {},
                },
                {
                    spec: SYNC_EVENT_NOTIFY_ADD @ $crate::tasks::SYNC_EVENT_NOTIFY_ADD,
                    module: remote_net_sync_event_notify_add,
                    name: "remote_net_sync_event_notify_add",
                    job: $crate::JOB_SYNC_EVENT_NOTIFY_ADD,
                    job_types: [remote_net_sync_event_notify_add = $crate::JOB_SYNC_EVENT_NOTIFY_ADD],
                    inputs: [
                        handle rdma_connection: 0 (*mut doca_rdma_connection)
                            get doca_rdma_task_remote_net_sync_event_notify_add_get_rdma_connection as (*const doca_rdma_connection)
                            set doca_rdma_task_remote_net_sync_event_notify_add_set_rdma_connection,
                        handle event: 2 (*mut doca_sync_event_remote_net)
                            get doca_rdma_task_remote_net_sync_event_notify_add_get_sync_event
                            set doca_rdma_task_remote_net_sync_event_notify_add_set_sync_event,
                        buf result_buf: 1 (*mut doca_buf)
                            get doca_rdma_task_remote_net_sync_event_notify_add_get_result_buf
                            set doca_rdma_task_remote_net_sync_event_notify_add_set_result_buf,
                        param add_data: 1 (u64)
                            get doca_rdma_task_remote_net_sync_event_notify_add_get_add_data
                            set doca_rdma_task_remote_net_sync_event_notify_add_set_add_data,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_rdma_task_remote_net_sync_event_notify_add,
                        cb: doca_rdma_task_remote_net_sync_event_notify_add_completion_cb_t,
                        set_conf: doca_rdma_task_remote_net_sync_event_notify_add_set_conf (num),
                        alloc_init: doca_rdma_task_remote_net_sync_event_notify_add_allocate_init,
                        as_task: doca_rdma_task_remote_net_sync_event_notify_add_as_task,
                        setters: void,
                        caps: [
                            supported doca_rdma_cap_task_remote_net_sync_event_notify_add_is_supported,
                        ],
                    },
                    c22: {},
                },
            ],
        }
    };
}

crate::rdma_task_table!(doca_core::task_specs);

/// The finish hooks that keep results in the task.
pub mod hooks {
    use crate::slot;
    use doca_core::exec::{JobRecord, TaskHooks, TaskInputs};

    fn receive_done(t: &TaskInputs, rec: &JobRecord, failed: bool) {
        if failed {
            return;
        }
        t.params[slot::RES_LEN_OP].set(rec.params[slot::RES_LEN_OP]);
        t.params[slot::RES_IMM].set(rec.params[slot::RES_IMM]);
        t.params[slot::RES_CONN].set(rec.params[slot::RES_CONN]);
    }

    fn read_done(t: &TaskInputs, rec: &JobRecord, failed: bool) {
        if !failed {
            t.state.set(rec.params[slot::RES_CONN]);
        }
    }

    /// A receive keeps its length and opcode (parameter 0), immediate (1) and
    /// connection (2).
    pub const RECEIVE: TaskHooks = TaskHooks {
        finish: Some(receive_done),
        ..TaskHooks::NONE
    };

    /// A read keeps its length (the task's own state).
    pub const READ: TaskHooks = TaskHooks {
        finish: Some(read_done),
        ..TaskHooks::NONE
    };
}
