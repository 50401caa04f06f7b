-- Active/standby: one row says which scheduler instance leads, under which epoch, until when.
-- A standby takes the lease once it has expired (times are the database's, so the instances' clocks
-- do not matter) and raises the epoch; the old leader's writes are then refused by gpucloud_fence.
create table scheduler_leader (
    id          integer      primary key check (id = 1),
    epoch       bigint       not null,
    holder      varchar(128),
    address     varchar(256),
    lease_until timestamptz  not null,
    acquired_at timestamptz
);
insert into scheduler_leader (id, epoch, lease_until) values (1, 0, '-infinity');

-- The first statement of every transaction a scheduler writes in: it holds the leader row shared until
-- the transaction ends, so a takeover (an update of that row) waits for writes that passed the fence,
-- and every later write of the old leader fails here. A transaction left idle (its process paused)
-- is ended after idle_ms, so a paused leader cannot hold a takeover back longer than that.
create function gpucloud_fence(claimed bigint, idle_ms integer) returns bigint
language plpgsql as $$
declare
    current bigint;
begin
    perform set_config('idle_in_transaction_session_timeout', idle_ms::text, true);
    select epoch into current from scheduler_leader where id = 1 for share;
    if current is distinct from claimed then
        raise exception 'fenced: this scheduler writes under epoch %, but the leader''s epoch is %', claimed, current
            using errcode = 'GC001';
    end if;
    return current;
end
$$;
