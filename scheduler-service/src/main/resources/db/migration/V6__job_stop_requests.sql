-- A job asked to checkpoint and then stop (preempted, spot notice, rebalance): why, by when it is stopped
-- anyway, and the job it makes room for. Kept on the row, so a restart or a takeover restores the same
-- deadline and preemptor instead of granting a new grace. All null when no stop is asked.
alter table jobs add column stop_reason text;
alter table jobs add column stop_deadline timestamptz;
alter table jobs add column stop_preemptor varchar(64);
