-- Job arrays and dependencies (issue 17). The longest state, WAITING_FOR_DEPENDENCIES, needs 24
-- characters; widening a varchar rewrites nothing. An array's elements are found by its id, in index order.
alter table jobs alter column state type varchar(32);
alter table jobs add column array_id varchar(64), add column array_index integer;
create index jobs_array on jobs (array_id, array_index) where array_id is not null;
