-- Usage events name the client API a call came in by (`chat`, `responses`, `messages`,
-- `embeddings`, `video`; null for events written before this column). The ledger functions that
-- write usage events read it from the event JSON with the other fields of 0018, which
-- re-creates them.
ALTER TABLE "usage_events" ADD COLUMN "api" text;
