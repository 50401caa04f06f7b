-- Operators' cordons and drains (ClusterService CordonNode, DrainNode, UndrainNode): no new work lands on these
-- hosts. Kept here, not only in memory, so that a restart or a takeover keeps them; the leader reads them at a
-- takeover and a standby while it follows. A drain also asked the host's jobs to move (their stop requests are
-- on the jobs' rows, V6); what remains of it is the cordon.
create table host_cordons (
    node_id    varchar(128) primary key,
    drained    boolean      not null,
    reason     text         not null,
    by_subject text         not null,
    since      timestamptz  not null
);
