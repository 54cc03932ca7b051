import { createHash, timingSafeEqual } from 'node:crypto';

/** The administrator's sign-in link (DESIGN §5): its token, who it signs in, and whether it works once. */
export interface BootstrapLink {
  token: string;
  email: string;
  oneTime: boolean;
}

/**
 * The bootstrap rule: a token signs in the administrator when it is the link's token and the
 * link still works. A one-time link (the generated one) is spent by its first success; an
 * operator-set one works until it is changed. One instance per control plane.
 */
export class BootstrapSignIn {
  private spent = false;

  constructor(private readonly link: BootstrapLink | null) {}

  /** The email to sign in, or null: no link, a spent link, or another token (compared in constant time). */
  redeem(token: string): string | null {
    const link = this.link;
    if (link === null || this.spent || token === '' || !sameSecret(token, link.token)) return null;
    if (link.oneTime) this.spent = true;
    return link.email;
  }
}

function sameSecret(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
