/**
 * Notifications (issue 14): who is told of what, and the rules of delivering it. A notification
 * belongs to its owner (a user or an organization); each event that matches it becomes one
 * delivery, a `notification` row of the outbox (`outbox.ts`) written in the same unit of work as
 * the change, then sent and retried by the outbox's delivery task.
 */
import { isIP } from 'node:net';
import type { JsonObject } from './records.js';

export const NOTIFICATION_EVENTS = [
  'job.succeeded',
  'job.failed',
  'job.cancelled',
  'drift.detected',
  'plan.needs_approval',
  'state.after_lost',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** What a test delivery (`POST /api/notifications/{id}/test`) carries as its event. */
export const NOTIFICATION_TEST_EVENT = 'notification.test';
export type DeliveryEvent = NotificationEvent | typeof NOTIFICATION_TEST_EVENT;

export const NOTIFICATION_KINDS = ['webhook', 'slack'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface Notification {
  id: string;
  /** The creator for a personal notification, the organization for an organization's. */
  owner_id: string;
  created_by: string;
  org_id: string | null;
  name: string;
  kind: NotificationKind;
  url: string;
  events: NotificationEvent[];
  /** Only this vineyard's events; null: every vineyard of the owner. */
  vineyard_id: string | null;
  /** The signing secret of a webhook, sealed with the SecretBox (null for Slack). */
  secret_sealed: string | null;
  created_at: string;
}

/** One try at sending a delivery. */
export interface DeliveryAttempt {
  at: string;
  /** The receiver's HTTP status; null when no answer came (refused, timeout, network error). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The first bytes of the receiver's answer, never more. */
  response_excerpt: string | null;
}

/** One event for one notification; its id is `X-Trellis-Delivery`, the same on every retry. */
export interface NotificationDelivery {
  id: string;
  owner_id: string;
  notification_id: string;
  event: DeliveryEvent;
  /** The body sent, fixed when the event happened. */
  payload: JsonObject;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  created_at: string;
  /** When the delivery task may next try it (while `pending`; a claim moves it to the lease's end). */
  next_attempt_at: string;
  finished_at: string | null;
}

export interface NotificationSettings {
  /** Allow private, loopback and link-local receivers (`TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS`). */
  allowPrivateUrls: boolean;
  /** Each HTTP request is abandoned after this long. */
  timeoutSeconds: number;
  /** Test deliveries (`POST /api/notifications/{id}/test`) an owner may send per minute. */
  testsPerMinute: number;
  /** The web interface's address, for the `url` of a job in a payload. */
  webUrl: string;
}

export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = {
  allowPrivateUrls: false,
  timeoutSeconds: 10,
  testsPerMinute: 10,
  webUrl: 'http://localhost:3000',
};

export const RESPONSE_EXCERPT_BYTES = 512;

/** The error of every attempt that got no HTTP answer, whatever the network said (no port oracle). */
export const DELIVERY_UNREACHABLE = 'no answer: the receiver could not be reached or did not answer over HTTP';
export const MAX_NOTIFICATION_URL_LENGTH = 2048;

/** Whether an attempt's outcome is worth trying again: no answer, 5xx, 408 and 429. */
export function isRetryableAttempt(attempt: Pick<DeliveryAttempt, 'status_code'>): boolean {
  const code = attempt.status_code;
  return code === null || code >= 500 || code === 408 || code === 429;
}

export function isSuccessfulAttempt(attempt: Pick<DeliveryAttempt, 'status_code'>): boolean {
  return attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
}

/**
 * Whether an IP address is one a notification may not reach by default: loopback, private,
 * link-local, carrier-grade NAT, unspecified, multicast and reserved ranges, and every IPv6 form
 * of the same, whatever its spelling: an IPv4 address mapped (`::ffff:127.0.0.1`, which URLs
 * normalize to `::ffff:7f00:1`), translated or compatible is judged as that IPv4 address (issue
 * 23), and unique-local, link-local, NAT64, 6to4 and Teredo addresses are refused outright (they
 * may lead to a private IPv4 address). Anything that is not an address is refused too.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return isPrivateIpv4(address);
  if (family !== 6) return true;
  const hextets = expandIpv6(address.toLowerCase());
  if (hextets === null) return true;
  const [first = 0, second = 0, , , fifth = 0, sixth = 0, seventh = 0, eighth = 0] = hextets;
  const zeros = (from: number, to: number) => hextets.slice(from, to).every((h) => h === 0);
  const embedded = `${seventh >> 8}.${seventh & 0xff}.${eighth >> 8}.${eighth & 0xff}`;
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), ::a.b.c.d (compatible; :: and ::1 too).
  if (zeros(0, 5) && sixth === 0xffff) return isPrivateIpv4(embedded);
  if (zeros(0, 4) && fifth === 0xffff && sixth === 0) return isPrivateIpv4(embedded);
  if (zeros(0, 6)) return true;
  if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return true; // multicast
  if (first === 0x2001 && second === 0x0db8) return true; // documentation
  if (first === 0x2001 && second === 0) return true; // Teredo wraps an IPv4 address
  if (first === 0x0064 && second === 0xff9b) return true; // NAT64 of any IPv4 (well-known and local-use)
  if (first === 0x0100 && zeros(1, 4)) return true; // 100::/64 discard
  if (first === 0x2002) return true; // 6to4 may wrap a private IPv4
  return false;
}

function isPrivateIpv4(address: string): boolean {
  const [a = 0, b = 0] = address.split('.').map(Number);
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224
  );
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part counts as two), or null. */
function expandIpv6(address: string): number[] | null {
  const zone = address.indexOf('%');
  let bare = zone >= 0 ? address.slice(0, zone) : address;
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(bare);
  if (dotted) {
    const octets = dotted.slice(2, 6).map(Number);
    if (octets.some((octet) => octet > 255)) return null;
    const [a = 0, b = 0, c = 0, d = 0] = octets;
    bare = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = bare.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string | undefined) => (part ? part.split(':').map((h) => Number.parseInt(h, 16)) : []);
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const all = [...head, ...Array<number>(Math.max(0, missing)).fill(0), ...tail];
  return all.some((h) => Number.isNaN(h) || h < 0 || h > 0xffff) ? null : all;
}
