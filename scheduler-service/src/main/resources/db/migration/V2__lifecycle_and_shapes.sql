-- The job's life beyond its state: how often it was interrupted or failed, the work those stops
-- lost, its latest checkpoint, when its current run started, and the capacity its next placement
-- asks for (spot jobs fall back to on-demand after repeated interruptions).
alter table jobs add column interruptions      integer not null default 0;
alter table jobs add column failures           integer not null default 0;
alter table jobs add column lost_work_seconds  bigint  not null default 0;
alter table jobs add column lost_gpu_seconds   bigint  not null default 0;
alter table jobs add column last_checkpoint_at timestamptz;
alter table jobs add column running_since      timestamptz;
alter table jobs add column capacity           varchar(16);

-- What a worker holds besides whole GPUs: a MIG slice (profile and start slice), a share of one GPU
-- (milli_gpu < 1000), CPU and memory.
alter table allocations add column mig_profile varchar(16);
alter table allocations add column mig_start   integer not null default -1;
alter table allocations add column milli_gpu   integer not null default 1000;
alter table allocations add column cpu_millis  integer not null default 0;
alter table allocations add column memory_mib  bigint  not null default 0;

-- Every checkpoint a job reported; the latest is where it resumes.
create table checkpoints (
    job_id        varchar(64) not null references jobs (id),
    path          text        not null,
    allocation_id varchar(96) not null,
    saved_at      timestamptz not null,
    primary key (job_id, path)
);
