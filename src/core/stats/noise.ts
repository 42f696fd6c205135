/**
 * Keyed noise on the public statistics' figures (docs/stats.md, "Figures are blurred"). With k−1
 * accounts of their own and one victim, an attacker meets any "k distinct accounts" threshold
 * and subtracts their own usage, known to the token, from the published figure: what is left
 * is the victim's. So every published count gets an offset drawn from an HMAC of a server
 * secret, the figure, the name and the window. The offset does not depend on the value: the
 * same figure of the same window reads the same however often it is asked (nothing averages
 * out), and usage the attacker adds moves it by exactly that usage (probing learns nothing).
 * What remains is the victim's usage to within the noise, never exactly.
 */
import { createHmac } from "node:crypto";

/** The largest offset, in tokens, of a token figure. */
export const TOKEN_NOISE = 2_000;
/** The largest offset of a call count. */
export const CALL_NOISE = 20;

export interface StatsNoise {
  /**
   * `value` plus the keyed offset of `label` in [−scale, scale]. Zero stays zero (no traffic is
   * not a secret worth fake figures) and anything above zero stays at least 1.
   */
  blur(value: number, scale: number, ...label: (string | number)[]): number;
}

export function keyedNoise(secret: string): StatsNoise {
  const key = createHmac("sha256", secret).update("stats-noise/v1").digest();
  return {
    blur(value, scale, ...label) {
      if (value <= 0) return value;
      const h = createHmac("sha256", key).update(label.join("\u0000")).digest();
      const offset = (h.readUInt32BE(0) % (2 * scale + 1)) - scale;
      return Math.max(1, value + offset);
    },
  };
}

/** No noise: the exact figures (a threshold of 1, or `STATS_NOISE=off`). */
export const EXACT: StatsNoise = { blur: (value) => value };
