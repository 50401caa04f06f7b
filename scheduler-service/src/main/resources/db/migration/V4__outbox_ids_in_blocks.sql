-- The outbox's ids come from its sequence in blocks of 50 (Hibernate's pooled optimizer), so the rows
-- of one transaction are inserted in batches at its flush instead of one round trip each (IDENTITY).
alter sequence outbox_id_seq increment by 50;
