export * from './memory/index.js';
export * from './conformance/index.js';
export * from './databases.js';
export * from './postgresSuites.js';
export * from './peers.js';
export * from './objectStorage.js';
