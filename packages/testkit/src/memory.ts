/**
 * The light entry (`@trellis/testkit/memory`): the in-memory fakes of the ports, the builders, the
 * conformance suites and the git job helpers, with no database driver, server, HTTP stack or
 * browser behind them, so a suite of use-case tests starts in seconds. Everything else (test
 * databases, a running control plane, peers) is in the full entry, `@trellis/testkit`.
 */
export * from './memory/index.js';
export * from './conformance/index.js';
export * from './gitJobs.js';
export * from './orgMembers.js';
export * from './tarballs.js';
