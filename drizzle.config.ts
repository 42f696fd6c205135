import { defineConfig } from "drizzle-kit";

// `npm run db:generate -- --name <change>` writes a new migration into drizzle/ from the
// schema; migrations are committed and applied at start on PostgreSQL and PGlite alike.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema.ts",
  out: "./drizzle",
});
