import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@trellis/core';
import { parseTrustProxy } from './syntaxes.js';
import { boolean, custom, httpUrl, integer, optionalInteger, optionalText, text } from './Setting.js';

/** Listening, the database and the artifact store, and what each request may ask for. */
export const SERVING_SETTINGS = {
  port: integer({
    env: 'PORT',
    default: 8080,
    min: 0,
    max: 65535,
    description: 'the port to listen on (`0`: any free one)',
  }),
  host: text({
    env: 'HOST',
    default: '127.0.0.1',
    description: 'the address to listen on (`0.0.0.0`: every interface)',
  }),
  dataDir: text({
    env: 'TRELLIS_DATA_DIR',
    default: './.trellis',
    description:
      'SQLite file, artifacts and generated secrets of the embedded default (relative to the working directory)',
  }),
  databaseUrl: optionalText({
    env: 'DATABASE_URL',
    accepts: '`sqlite://…`, `postgres://…`, `postgresql://…`',
    shownDefault: '`sqlite://<data dir>/trellis.db`',
    description: '`postgres://user:pass@host:5432/db` for Postgres',
  }),
  databasePoolMax: integer({
    env: 'TRELLIS_DB_POOL_MAX',
    default: 10,
    min: 2,
    max: 1000,
    description:
      "Postgres: most connections of the server's pool; each server holds one more for `LISTEN/NOTIFY` (and the leads of global background tasks). Size `max_connections` for replicas × (this + 1), plus whatever else uses the database server",
  }),
  migrateOnStart: boolean({
    env: 'TRELLIS_MIGRATE_ON_START',
    default: true,
    description:
      "`serve` applies pending database migrations before it serves. `false`: only `trellis-server migrate` changes the schema (the Helm chart's pre-upgrade job, a deploy step), and a server whose database lacks a migration of its release refuses to start, naming the command. A database ahead of the server (a newer release migrated it) is never refused: see Upgrades in `docs/operations.md`",
  }),
  artifactsUrl: optionalText({
    env: 'TRELLIS_ARTIFACTS_URL',
    accepts: '`file://…`, `s3://…`, `gs://…`',
    shownDefault: '`file://<data dir>/artifacts`',
    description:
      'where plan files and state versions go: `s3://bucket/prefix[?region=…&endpoint=…&path_style=true&part_size_mib=5&queue_size=1&buffer_mib=16]` with `@trellis/artifacts-s3` (AWS, MinIO, Ceph, R2; also reads `AWS_REGION`, `AWS_ENDPOINT_URL_S3`, `AWS_S3_FORCE_PATH_STYLE` — path-style requests, needed by MinIO and Ceph — and the AWS credentials chain), or `gs://bucket/prefix[?endpoint=…&project=…]` with `@trellis/artifacts-gcs` (reads `STORAGE_EMULATOR_HOST`, `GOOGLE_CLOUD_PROJECT` and Application Default Credentials); see `docs/storage.md`',
  }),
  webUrl: httpUrl({
    env: 'TRELLIS_WEB_URL',
    stripTrailingSlashes: true,
    shownDefault: '`http://localhost:<PORT>` (the port bound, with `PORT=0`)',
    description:
      'public origin of the web interface; cookie-authenticated writes must come from it; `https://` turns on `Secure` `__Host-` cookies',
  }),
  trustProxy: custom({
    env: 'TRELLIS_TRUST_PROXY',
    accepts: '`false`, a hop count (`0`–`10`), or addresses, CIDRs and `loopback`, `linklocal`, `uniquelocal`',
    default: false,
    description:
      "whose `X-Forwarded-For` gives the client address that per-client limits count: `false` (the connection's peer), the number of proxies in front of the server (`1` behind one load balancer), or a comma-separated list of proxy addresses/CIDRs and `loopback`, `linklocal`, `uniquelocal`. `true` is refused (any client could pick its address). Behind a load balancer, leaving it `false` makes every client one address, so one guesser trips the limit for everyone",
    parse: parseTrustProxy,
  }),
  bodyIdleTimeoutSeconds: integer({
    env: 'TRELLIS_HTTP_BODY_IDLE_TIMEOUT_S',
    default: 120,
    min: 1,
    max: 3600,
    description:
      'a request body larger than 1 MiB (a plan, a state version, a configuration version, a module) is cut when nothing of it arrives this long; it is never cut for its total time, so an upload on a slow link completes. A smaller body must arrive whole within 5 minutes (as Node does)',
  }),
  claimLongPollsPerWorker: integer({
    env: 'TRELLIS_CLAIM_LONG_POLLS_PER_WORKER',
    default: 4,
    min: 1,
    max: 100,
    description:
      'claim long polls (`POST /api/jobs/claim?wait=N`) one worker may hold open at once; past it, `429 too_many_long_polls`',
  }),
  claimLongPollsTotal: integer({
    env: 'TRELLIS_CLAIM_LONG_POLLS_TOTAL',
    default: 1000,
    min: 1,
    max: 100_000,
    description:
      'claim long polls the server may hold open at once, all workers together; past it, `429 too_many_long_polls`',
  }),
  logStreams: {
    maxBufferBytes: integer({
      env: 'TRELLIS_STREAM_MAX_BUFFER_BYTES',
      default: 1024 * 1024,
      min: 64 * 1024,
      max: 64 * 1024 * 1024,
      shownDefault: '`1048576` (1 MiB)',
      description:
        'bytes a live-log stream (`GET /api/jobs/{id}/logs/stream`) may hold for a client that reads slowly; a client further behind is disconnected and resumes with `Last-Event-ID`',
    }),
    perUser: integer({
      env: 'TRELLIS_STREAMS_PER_USER',
      default: 20,
      min: 1,
      max: 10_000,
      description:
        'live-log streams one user may have open at once (browser tabs and followers together); more answer `429 too_many_streams`',
    }),
    perJob: integer({
      env: 'TRELLIS_STREAMS_PER_JOB',
      default: 200,
      min: 1,
      max: 100_000,
      description: 'live-log streams open on one job at once; more answer `429 too_many_streams`',
    }),
  },
  pageLimits: {
    defaultLimit: optionalInteger({
      env: 'TRELLIS_PAGE_LIMIT_DEFAULT',
      min: 1,
      max: 1000,
      shownDefault: `\`${DEFAULT_PAGE_LIMIT}\` (at most \`TRELLIS_PAGE_LIMIT_MAX\`)`,
      description:
        'items per page of every list endpoint (and web list) when the request names no `limit`; at most `TRELLIS_PAGE_LIMIT_MAX`',
    }),
    maxLimit: integer({
      env: 'TRELLIS_PAGE_LIMIT_MAX',
      default: MAX_PAGE_LIMIT,
      min: 1,
      max: 1000,
      description: 'the largest `limit` a list request may ask for; a larger one is `400 validation_failed`',
    }),
  },
};
