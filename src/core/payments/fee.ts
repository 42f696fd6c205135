/**
 * The specification's 3 % platform fee: rounded up to the won and taken from the amount paid,
 * for operator top-ups and self-service payments alike (one function, so both show the same).
 */
export const PLATFORM_FEE_PERCENT = 3;

export function topupSplit(amountKrw: number): { fee: number; credited: number } {
  const fee = Math.ceil((amountKrw * PLATFORM_FEE_PERCENT) / 100);
  return { fee, credited: amountKrw - fee };
}
