export * from './dedicatedPostgres.js';
export * from './invariants.js';
export * from './records.js';
export * from './toxiproxy.js';
export * from './tmpfs.js';
