/**
 * The private-address rule of notification receivers (issue 14), whatever the spelling of the
 * address (issue 23: IPv4 addresses mapped into IPv6 passed it).
 */
import { isPrivateAddress } from '@trellis/core';
import { describe, expect, it } from 'vitest';

describe('isPrivateAddress', () => {
  it('refuses private, loopback, link-local and reserved IPv4 addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1']) expect(isPrivateAddress(address), address).toBe(false);
  });

  it('judges an IPv4 address mapped, translated or compatible in IPv6 as that IPv4 address, in every spelling', () => {
    const privateOnes = [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:7f00:1',
      '0000:0000:0000:0000:0000:FFFF:7F00:0001',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '::ffff:0:7f00:1',
      '::ffff:0:127.0.0.1',
      '::127.0.0.1',
      '::7f00:1',
      '::ffff:10.0.0.1',
    ];
    for (const address of privateOnes) expect(isPrivateAddress(address), address).toBe(true);
    for (const address of ['::ffff:8.8.8.8', '::ffff:808:808']) expect(isPrivateAddress(address), address).toBe(false);
  });

  it('refuses IPv6 loopback, unspecified, unique-local, link-local, multicast and tunnels to IPv4', () => {
    for (const address of [
      '::1',
      '::',
      'fd00::1',
      'fe80::1%eth0',
      'ff02::1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      '2001:0:4136:e378::1',
      '2001:db8::1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    expect(isPrivateAddress('2606:4700:4700::1111')).toBe(false);
  });

  it('refuses what is not an address', () => {
    for (const address of ['localhost', '', '::ffff:300.0.0.1', '1::2::3'])
      expect(isPrivateAddress(address), address).toBe(true);
  });
});
