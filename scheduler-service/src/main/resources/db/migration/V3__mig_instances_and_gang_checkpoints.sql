-- The MIG instance a worker ran on, as its agent reported it on STARTED (null until then, and for
-- whole GPUs and fractions).
alter table allocations add column mig_uuid text;

-- Every worker's report of a checkpoint. A gang's checkpoint counts (a row in checkpoints, and the
-- job's resume point) only once every worker of the attempt has reported the same path.
create table checkpoint_reports (
    job_id        varchar(64) not null references jobs (id),
    path          text        not null,
    allocation_id varchar(96) not null,
    saved_at      timestamptz not null,
    primary key (job_id, path, allocation_id)
);
