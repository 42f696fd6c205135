/**
 * The policy service's rules, straight against the repository on PostgreSQL and PGlite: who
 * sees a policy (its creator; every member of its organization; nobody else, as 404), who
 * changes or deletes it (the creator; the organization's owners and admins; 403 for other
 * members), who creates an organization's policy (members only), and that every change is
 * announced once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GatewayError, ValidationFailure } from "../../src/core/errors";
import { PolicyService, type PolicyDraft } from "../../src/core/policies/service";
import { PolicyRepo } from "../../src/db/repos/policies";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { quickUser, uniqueSlug } from "./helpers";

const UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000";

/** The error code a rejected promise carries (or the name of a non-gateway error). */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error.errorCode;
    if (error instanceof ValidationFailure) return `422 ${error.issues.map((i) => i.loc.join(".")).join(",")}`;
    throw error;
  }
  return "accepted";
}

for (const kind of await dbKinds()) {
  describe(`policy service on ${kind}`, () => {
    let gateway: TestGateway;
    let service: PolicyService;
    const announced: string[] = [];
    beforeAll(async () => {
      gateway = await startTestGateway({ db: kind });
      service = new PolicyService({
        store: new PolicyRepo(gateway.gw.deps.db),
        catalog: () => gateway.gw.catalog.current(),
        changed: async (policyId) => void announced.push(policyId),
      });
    }, 30_000);
    afterAll(async () => {
      await gateway?.stop();
    });

    const draft = (over: Partial<PolicyDraft> = {}): PolicyDraft => ({
      slug: uniqueSlug("svc"),
      displayName: "service test",
      policyType: "fallback",
      entries: [{ model: "gpt-4o-mini" }],
      orgId: null,
      ...over,
    });

    /** An organization owned by `owner`, with the given members and roles. */
    async function organization(owner: { id: string }, members: { id: string; role: string }[]): Promise<string> {
      const org = await gateway.admin("POST", "/v1/admin/orgs", { name: "Team", owner_user_id: owner.id });
      expect(org.status).toBe(201);
      for (const member of members)
        expect(
          (
            await gateway.admin("POST", `/v1/admin/orgs/${org.body.org_id}/members`, {
              user_id: member.id,
              role: member.role,
            })
          ).status,
        ).toBe(201);
      return org.body.org_id;
    }

    test("a personal policy: its creator sees, changes and deletes it; anyone else gets 404", async () => {
      const [creator, stranger] = [await quickUser(gateway), await quickUser(gateway)];
      const policy = await service.create(
        creator.id,
        draft({ entries: [{ model: "openai/gpt-4o-mini", retries: 1 }] }),
      );
      expect(policy.entries).toEqual([{ model: "gpt-4o-mini", retries: 1 }]);
      expect(policy.isActive).toBe(true);
      expect((await service.visible(creator.id, policy.id)).id).toBe(policy.id);
      expect((await service.list(creator.id)).map((p) => p.id)).toContain(policy.id);

      expect(await refusal(service.visible(stranger.id, policy.id))).toBe("not_found");
      expect(await refusal(service.update(stranger.id, policy.id, { displayName: "mine now" }))).toBe("not_found");
      expect(await refusal(service.delete(stranger.id, policy.id))).toBe("not_found");
      expect((await service.list(stranger.id)).map((p) => p.id)).not.toContain(policy.id);
      expect(await refusal(service.visible(creator.id, UNKNOWN_UUID))).toBe("not_found");

      expect((await service.update(creator.id, policy.id, { displayName: "renamed" })).displayName).toBe("renamed");
      await service.delete(creator.id, policy.id);
      expect(await refusal(service.visible(creator.id, policy.id))).toBe("not_found");
    });

    test("an organization's policy: members see it; only the creator, owners and admins change it", async () => {
      const [owner, admin, member, creator, outsider] = await Promise.all(
        [1, 2, 3, 4, 5].map(() => quickUser(gateway)),
      );
      const orgId = await organization(owner, [
        { id: admin.id, role: "admin" },
        { id: member.id, role: "member" },
        { id: creator.id, role: "member" },
      ]);
      expect(await refusal(service.create(outsider.id, draft({ orgId })))).toBe("org_membership_required");
      const policy = await service.create(creator.id, draft({ orgId }));

      for (const user of [owner, admin, member, creator])
        expect((await service.visible(user.id, policy.id)).id).toBe(policy.id);
      expect(await refusal(service.visible(outsider.id, policy.id))).toBe("not_found");

      expect(await refusal(service.update(member.id, policy.id, { displayName: "x" }))).toBe("forbidden");
      expect(await refusal(service.delete(member.id, policy.id))).toBe("forbidden");
      expect(await refusal(service.update(outsider.id, policy.id, { displayName: "x" }))).toBe("not_found");
      for (const [user, name] of [
        [creator, "by creator"],
        [owner, "by owner"],
        [admin, "by admin"],
      ] as const) {
        expect((await service.update(user.id, policy.id, { displayName: name })).displayName).toBe(name);
      }
      await service.delete(admin.id, policy.id);
      expect(await refusal(service.visible(owner.id, policy.id))).toBe("not_found");
    });

    test("slug and organization may be echoed, never changed; an empty change changes nothing and announces nothing", async () => {
      const creator = await quickUser(gateway);
      const policy = await service.create(creator.id, draft());
      const before = announced.length;
      expect(await refusal(service.update(creator.id, policy.id, { slug: "another-slug", orgId: UNKNOWN_UUID }))).toBe(
        "422 body.slug,body.org_id",
      );
      expect(await service.update(creator.id, policy.id, { slug: policy.slug })).toEqual(policy);
      expect(announced.length).toBe(before);
      expect(
        await refusal(service.update(creator.id, policy.id, { entries: [{ model: "no-such-model-anywhere" }] })),
      ).toBe("invalid_policy_entry");
      expect(announced.length).toBe(before);
    });

    test("every stored change is announced once, with the policy's id; a taken slug is 409", async () => {
      const creator = await quickUser(gateway);
      const start = announced.length;
      const policy = await service.create(creator.id, draft());
      await service.update(creator.id, policy.id, { isActive: false });
      await service.delete(creator.id, policy.id);
      expect(announced.slice(start)).toEqual([policy.id, policy.id, policy.id]);
      const taken = await service.create(creator.id, draft());
      expect(await refusal(service.create(creator.id, draft({ slug: taken.slug })))).toBe("conflict");
    });
  });
}
