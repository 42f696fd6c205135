CREATE TABLE "routing_policies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"org_id" uuid,
	"slug" text NOT NULL,
	"display_name" text NOT NULL,
	"policy_type" text NOT NULL,
	"entries" jsonb NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "routing_policies" ADD CONSTRAINT "routing_policies_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "routing_policies" ADD CONSTRAINT "routing_policies_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "routing_policies_user_slug_uq" ON "routing_policies" USING btree ("user_id","slug");--> statement-breakpoint
CREATE UNIQUE INDEX "routing_policies_org_slug_uq" ON "routing_policies" USING btree ("org_id","slug") WHERE org_id is not null;--> statement-breakpoint
CREATE INDEX "routing_policies_org_idx" ON "routing_policies" USING btree ("org_id");