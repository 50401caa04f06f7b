-- Which transaction last wrote each job and allocation row. A standby reads the open rows once and then,
-- every tick, only the rows written by transactions its last read could not see
-- (pg_visible_in_snapshot against that read's pg_current_snapshot()), and replays them: its memory stays
-- warm, and a takeover is a catch-up of the last tick's changes instead of a read of all open work.
alter table jobs add column change_xid xid8;
alter table allocations add column change_xid xid8;

create function gpucloud_mark_change() returns trigger
language plpgsql as $$
begin
    new.change_xid := pg_current_xact_id();
    return new;
end
$$;

create trigger jobs_mark_change before insert or update on jobs
    for each row execute function gpucloud_mark_change();
create trigger allocations_mark_change before insert or update on allocations
    for each row execute function gpucloud_mark_change();

create index jobs_change_xid on jobs (change_xid);
create index allocations_change_xid on allocations (change_xid);

-- A full read (a start, or a standby after a deposition) also takes the allocations that ended lately:
-- a host's report from just before their end may still list them, and must not read as foreign work.
create index allocations_ended_at on allocations (ended_at);
