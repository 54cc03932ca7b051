import { BootstrapSignIn } from '@trellis/core';
import { describe, expect, it } from 'vitest';

const TOKEN = 'a-long-bootstrap-token-of-the-operator';

describe('BootstrapSignIn', () => {
  it('a one-time link signs the administrator in once, then never again', () => {
    const bootstrap = new BootstrapSignIn({ token: TOKEN, email: 'admin@localhost', oneTime: true });
    expect(bootstrap.redeem(TOKEN)).toBe('admin@localhost');
    expect(bootstrap.redeem(TOKEN)).toBeNull();
  });

  it('an operator-set link works until it is changed', () => {
    const bootstrap = new BootstrapSignIn({ token: TOKEN, email: 'ops@example.com', oneTime: false });
    expect(bootstrap.redeem(TOKEN)).toBe('ops@example.com');
    expect(bootstrap.redeem(TOKEN)).toBe('ops@example.com');
  });

  it('a wrong or empty token does not spend a one-time link', () => {
    const bootstrap = new BootstrapSignIn({ token: TOKEN, email: 'admin@localhost', oneTime: true });
    expect(bootstrap.redeem('wrong')).toBeNull();
    expect(bootstrap.redeem('')).toBeNull();
    expect(bootstrap.redeem(`${TOKEN}x`)).toBeNull();
    expect(bootstrap.redeem(TOKEN)).toBe('admin@localhost');
  });

  it('without a link nothing signs in', () => {
    const bootstrap = new BootstrapSignIn(null);
    expect(bootstrap.redeem('')).toBeNull();
    expect(bootstrap.redeem(TOKEN)).toBeNull();
  });
});
