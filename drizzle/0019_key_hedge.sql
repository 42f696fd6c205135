-- Hedged requests per API key (docs/hedging.md): off unless the key's owner turns them on.
ALTER TABLE "api_keys" ADD COLUMN "hedge" boolean DEFAULT false NOT NULL;
