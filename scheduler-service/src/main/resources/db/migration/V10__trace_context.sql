-- The W3C traceparent of the span that accepted a job, so that its placement, minutes later or after a takeover,
-- continues the job's trace; and the traceparent each outbox record is published under (null: untraced).
alter table jobs add column traceparent varchar(64);
alter table outbox add column traceparent varchar(64);
