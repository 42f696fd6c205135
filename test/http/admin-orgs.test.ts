/** GET /v1/admin/orgs: the operator sees each organization with its members, roles and budgets. */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, suiteGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

for (const kind of await dbKinds()) {
  describe(`admin organization list on ${kind}`, () => {
    const gw = suiteGateway({ db: kind });

    test("organizations newest first with members ordered by role; only the admin token", async () => {
      const g = gw();
      const owner = await fastUser(g);
      const member = await fastUser(g);
      const first = (await g.admin("POST", "/v1/admin/orgs", { name: "first", owner_user_id: owner.id })).body;
      const second = (await g.admin("POST", "/v1/admin/orgs", { name: "second", owner_user_id: owner.id })).body;
      expect(
        (
          await g.admin("POST", `/v1/admin/orgs/${second.org_id}/members`, {
            user_id: member.id,
            role: "member",
            monthly_budget_krw: 5000,
          })
        ).status,
      ).toBe(201);
      const r = await g.admin("GET", "/v1/admin/orgs");
      expect(r.status).toBe(200);
      const ours = r.body.data.filter((o: any) => [first.org_id, second.org_id].includes(o.org_id));
      expect(ours.map((o: any) => o.name)).toEqual(["second", "first"]);
      expect(ours[0].members).toEqual([
        { user_id: owner.id, email: owner.email, role: "owner", monthly_budget_krw: null },
        { user_id: member.id, email: member.email, role: "member", monthly_budget_krw: 5000 },
      ]);
      expect((await g.admin("GET", "/v1/admin/orgs?limit=1")).body.data.length).toBe(1);
      expect((await g.admin("GET", "/v1/admin/orgs?limit=0")).status).toBe(422);
      expect((await g.call("GET", "/v1/admin/orgs", { token: owner.jwt })).status).toBe(401);
      expect((await g.call("GET", "/v1/admin/orgs")).status).toBe(401);
    });
  });
}
