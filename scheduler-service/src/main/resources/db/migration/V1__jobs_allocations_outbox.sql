-- Jobs as submitted, and where they stand.
create table jobs (
    id                varchar(64)  primary key,
    tenant            varchar(63)  not null,
    client_request_id varchar(128) not null,
    name              varchar(128) not null,
    spec_json         text         not null,
    priority          integer      not null,
    state             varchar(16)  not null,
    reason            text         not null default '',
    resume_from       text,
    exit_code         integer,
    attempt           integer      not null default 0,
    submitted_at      timestamptz  not null,
    updated_at        timestamptz  not null,
    constraint jobs_request_once unique (tenant, client_request_id)
);
create index jobs_state_queue on jobs (state, priority desc, submitted_at);
create index jobs_tenant_recent on jobs (tenant, submitted_at desc, id desc);
create index jobs_recent on jobs (submitted_at desc, id desc);

-- One row per worker per attempt: the GPUs it holds on one host.
create table allocations (
    id           varchar(96) primary key,
    job_id       varchar(64) not null references jobs (id),
    attempt      integer     not null,
    rank         integer     not null,
    node_id      varchar(128) not null,
    gpu_indices  varchar(256) not null,
    state        varchar(16) not null,
    exit_code    integer,
    created_at   timestamptz not null,
    started_at   timestamptz,
    ended_at     timestamptz
);
create index allocations_job on allocations (job_id);
create index allocations_active on allocations (state) where state in ('STARTING', 'RUNNING');

-- Records to publish, written in the same transaction as the change they announce
-- (transactional outbox): a crash between commit and send loses nothing.
create table outbox (
    id         bigserial   primary key,
    topic      varchar(128) not null,
    record_key varchar(256) not null,
    payload    bytea       not null,
    ce_id      varchar(64) not null,
    ce_type    varchar(128) not null,
    ce_time    timestamptz not null
);
