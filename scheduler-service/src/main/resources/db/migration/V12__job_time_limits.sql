-- Job time limits (issue 17). ran_millis: the running time the job's ended attempts used (from all workers
-- started to the attempt's end; its running attempt counts from running_since), which its time limit bounds.
-- stop_ends: the stop request ends the job (FAILED: its time limit was reached) instead of requeueing it, so a
-- restart or a takeover while it saves its last checkpoint still ends it.
alter table jobs add column ran_millis bigint not null default 0;
alter table jobs add column stop_ends boolean not null default false;
