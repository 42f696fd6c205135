-- A poller's hold on a video job is a claim: "lease" names the credit leases of the ledger.
ALTER TABLE "video_jobs" RENAME COLUMN "lease_owner" TO "claim_owner";--> statement-breakpoint
ALTER TABLE "video_jobs" RENAME COLUMN "lease_until" TO "claim_until";
