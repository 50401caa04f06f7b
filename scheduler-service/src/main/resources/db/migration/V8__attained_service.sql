-- Least attained service within a priority class: the GPU-seconds a job's ended attempts ran (time run x
-- GPUs, its running attempt counts from running_since), and when it last went back in line (null: it waits
-- since its submission), which its starvation guard measures from.
alter table jobs add column attained_gpu_seconds bigint not null default 0;
alter table jobs add column requeued_at timestamptz;
