import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";

setDefaultTimeout(30_000);

for (const kind of await dbKinds()) {
  describe(`foundation on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("signup, login, me", async () => {
      const u = await g.newUser({ creditKrw: 1000 });
      const me = await g.call("GET", "/v1/me", { token: u.jwt });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({
        user_id: u.id,
        email: u.email,
        balance_krw: 1000,
        held_krw: 0,
        regulated: false,
        xborder_training_consent: false,
      });
      expect(me.headers.get("x-request-id")).toBeTruthy();
    });

    test("key creation returns the secret once", async () => {
      const u = await g.newUser();
      const k = await g.newKey(u, { name: "ci" });
      expect(k.key).toStartWith("sk-gw-");
      const list = await g.call("GET", "/v1/keys", { token: u.jwt });
      expect(list.body.items[0].key).toBeUndefined();
    });
  });
}
